//! Integration tests of the reference server: through the router (`tower::ServiceExt::oneshot`)
//! for every rule and error code, and over a real socket via `spawn`.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod helpers;
mod processo;
mod proxy_pg;
mod rede;
mod server;

mod adversario;
mod ambiente;
mod arquivos;
mod auth;
mod banco;
mod cabecalho;
mod car;
mod carga;
mod carga_interrompida;
mod cli;
mod concorrencia;
mod conexao_presa;
mod conta;
mod copia;
mod corpo_lento;
mod database_down;
mod diferencial;
mod dinheiro;
mod edge;
mod entradas;
mod erros;
mod escala;
mod historico_custo;
mod house;
mod keys;
mod limite_endereco;
mod logs;
mod metricas;
mod migracoes;
mod modo_teste_token;
mod nginx;
mod nul;
mod openapi;
mod pendentes;
mod perde_resposta;
mod pg_crash;
mod postgres;
mod pressao;
mod probes;
mod processos;
mod proprietario;
mod recarga;
mod recarga_reuso;
mod recibo;
mod retencao;
mod socket;
mod webhook;
mod webhook_psp;
mod webhook_secret;
