//! Integration tests of the reference server: through the router (`tower::ServiceExt::oneshot`)
//! for every rule and error code, and over a real socket via `spawn`.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod helpers;
mod proxy_pg;
mod rede;
mod servidor;

mod adversario;
mod arquivos;
mod auth;
mod borda;
mod car;
mod carga;
mod cli;
mod concorrencia;
mod conta;
mod diferencial;
mod dinheiro;
mod erros;
mod escala;
mod historico_custo;
mod migracoes;
mod nul;
#[cfg(feature = "openapi")]
mod openapi;
mod perde_resposta;
mod postgres;
mod processos;
mod proprietario;
mod recarga;
mod recarga_reuso;
mod recibo;
mod socket;
mod webhook;
mod webhook_psp;
