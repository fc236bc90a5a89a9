//! One file per command: its clap arguments and `run(ctx, args)`, calling library code only.

pub mod car;
pub mod completions;
pub mod config;
pub mod historico;
pub mod limites;
pub mod local;
pub mod login;
pub mod logout;
pub mod lote;
pub mod man;
pub mod proprietario;
pub mod recarga;
pub mod recargas;
pub mod recibo;
pub mod saldo;
pub mod uso;
