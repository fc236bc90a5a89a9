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

use crate::cli::Comando;
use crate::context::Context;
use crate::error::Result;

/// Runs one command.
///
/// # Errors
/// The command's error, mapped to an exit code by [`crate::error`].
pub async fn run(ctx: &mut Context, comando: Comando) -> Result<()> {
    match comando {
        Comando::Car(a) => car::run(ctx, a).await,
        Comando::Recibo(a) => recibo::run(ctx, a).await,
        Comando::Proprietario(a) => proprietario::run(ctx, a).await,
        Comando::Saldo(a) => saldo::run(ctx, a).await,
        Comando::Historico(a) => historico::run(ctx, a).await,
        Comando::Limites(a) => limites::run(ctx, a).await,
        Comando::Uso(a) => uso::run(ctx, a).await,
        Comando::Recarga(a) => recarga::run(ctx, a).await,
        Comando::Recargas(a) => recargas::run(ctx, a).await,
        Comando::Lote(a) => lote::run(ctx, a).await,
        Comando::Login(a) => login::run(ctx, a).await,
        Comando::Logout(a) => logout::run(ctx, a).await,
        Comando::Config(a) => config::run(ctx, a).await,
        Comando::Completions(a) => completions::run(ctx, a),
        Comando::Man(a) => man::run(ctx, a),
        Comando::Local(a) => local::run(ctx, a).await,
    }
}
