//! Integration tests of the `carapi` binary: the real binary (assert_cmd) against the real
//! reference server spawned in-process on a random port over a temporary SQLite store.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod ajuda;
mod analista;
mod consultas;
mod conta;
mod credenciais;
mod dinheiro;
mod harness;
mod largura;
mod local;
mod lote;
mod lote_saidas;
mod portugues;
mod recarga;
mod tela;
mod terminal;
mod verdade;
mod vocabulario;
