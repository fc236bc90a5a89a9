//! Integration tests of the reference server: through the router (`tower::ServiceExt::oneshot`)
//! for every rule and error code, and over a real socket via `spawn`.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod helpers;
mod network;
mod proxy_pg;
mod server;
mod server_process;

mod address_limit;
mod adversary;
mod auth;
mod backup;
mod car;
mod cli;
mod concurrency;
mod conta;
mod database;
mod database_down;
mod differential;
mod edge;
mod environment;
mod erros;
mod file_modes;
mod head_bound;
mod historico_cost;
mod house;
mod inputs;
mod interrupted_load;
mod keys;
mod load;
mod logs;
mod lost_reply;
mod metrics;
mod migrations;
mod money;
mod nginx;
mod nul_bytes;
mod openapi;
mod pending;
mod pg_crash;
mod postgres;
mod pressure;
mod probes;
mod processes;
mod proprietario;
mod recarga;
mod recarga_reuse;
mod recibo;
mod retencao;
mod scale;
mod slow_body;
mod socket;
mod stuck_connection;
mod test_mode_token;
mod webhook;
mod webhook_psp;
mod webhook_secret;
