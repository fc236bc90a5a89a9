//! One file per command: its clap arguments and `run(ctx, args)`, calling library code only.

pub(crate) mod acervo;
pub(crate) mod batch;
pub(crate) mod car;
pub(crate) mod completions;
pub(crate) mod config;
pub(crate) mod historico;
pub(crate) mod limites;
pub(crate) mod local;
pub(crate) mod login;
pub(crate) mod logout;
pub(crate) mod man;
pub(crate) mod proprietario;
pub(crate) mod recarga;
pub(crate) mod recargas;
pub(crate) mod recibo;
pub(crate) mod saldo;
pub(crate) mod uso;
pub(crate) mod vigiar;
