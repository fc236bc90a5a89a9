//! Integration tests of the `carapi` binary: the real binary (assert_cmd) against the real
//! reference server spawned in-process on a random port over a temporary SQLite store.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

#[path = "help.rs"]
mod ajuda;
#[path = "analyst.rs"]
mod analista;
mod consultas;
mod conta;
#[path = "credentials.rs"]
mod credenciais;
#[path = "money.rs"]
mod dinheiro;
mod harness;
#[path = "width.rs"]
mod largura;
mod local;
mod lote;
#[path = "lote_outputs.rs"]
mod lote_saidas;
#[path = "portuguese.rs"]
mod portugues;
mod recarga;
#[path = "screen.rs"]
mod tela;
mod terminal;
#[path = "truth.rs"]
mod verdade;
#[path = "vocabulary.rs"]
mod vocabulario;
