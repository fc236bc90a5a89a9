//! `carapi logout`: removes the stored key (keyring and fallback file).

use crate::context::Context;
use crate::credentials;
use crate::error::Result;

/// Arguments of `carapi logout`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Runs `carapi logout`. Not an error when nothing was stored.
///
/// # Errors
/// When the fallback file exists but cannot be removed.
pub(crate) async fn run(ctx: &mut Context, _args: Args) -> Result<()> {
    let removed = credentials::remove(&ctx.paths)?;
    if removed.is_empty() {
        ctx.shell.note("Nenhuma chave guardada.");
    }
    for f in removed {
        ctx.shell.note(format!("Chave removida: {f}."));
    }
    if std::env::var_os("CARAPI_API_KEY").is_some() {
        ctx.shell
            .warn("CARAPI_API_KEY continua definida no ambiente");
    }
    Ok(())
}
