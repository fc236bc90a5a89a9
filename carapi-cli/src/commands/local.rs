//! `carapi local servir [--endereco ADDR]` and `carapi local pagar RECARGA_ID`.

use std::net::SocketAddr;

use uuid::Uuid;

use crate::context::Context;
use crate::error::Result;

/// Arguments of `carapi local`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Sub,
}

/// Subcommands of `carapi local`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Roda o servidor de referência em primeiro plano, sobre o armazenamento local (Ctrl-C para parar)
    #[command(name = "servir", alias = "serve")]
    Serve {
        /// Endereço de escuta
        #[arg(long = "endereco", alias = "bind", value_name = "ENDEREÇO", default_value = "127.0.0.1:8080", value_parser = crate::parsers::parse_address)]
        bind: SocketAddr,
    },
    /// Simula o banco pagando uma recarga pendente do modo local (de outro terminal)
    #[command(name = "pagar")]
    Pay {
        /// ID da recarga (mostrado por `carapi --local recarga criar`)
        #[arg(value_name = "RECARGA_ID", value_parser = crate::parsers::parse_id)]
        recarga_id: Uuid,
    },
}

/// Runs `carapi local ...` (a usage error, exit 2, in a build without the `local` feature).
///
/// # Errors
/// Store or bind failures (1); unknown top-up (4).
#[cfg(not(feature = "local"))]
pub(crate) async fn run(_ctx: &mut Context, _args: Args) -> Result<()> {
    Err(crate::context::no_local_mode())
}

/// Runs `carapi local ...`.
///
/// # Errors
/// Store or bind failures (1); unknown top-up (4).
#[cfg(feature = "local")]
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    use crate::error::CliError;
    use crate::local::Local;
    match args.command {
        Sub::Serve { bind } => {
            let local = Local::start(&ctx.paths, Some(bind)).await?;
            ctx.shell.line(local.base_url())?;
            ctx.shell.flush()?;
            ctx.shell.note(format!(
                "Servidor local em {} (dados em {}). Chave da conta local em {}; use CARAPI_BASE_URL={} e CARAPI_API_KEY=\"$(cat {})\". Ctrl-C para parar.",
                local.base_url(),
                ctx.paths.local_dir().display(),
                local.key_file().display(),
                local.base_url(),
                local.key_file().display(),
            ));
            let r = tokio::signal::ctrl_c().await;
            local.shutdown().await;
            r.map_err(|e| CliError::other("SINAL", crate::foreign_errors::io(&e)))?;
            ctx.shell.note("Servidor local encerrado.");
            Ok(())
        }
        Sub::Pay { recarga_id } => {
            let local = Local::start(&ctx.paths, None).await?;
            let r = local.pay(recarga_id).await;
            local.shutdown().await;
            r?;
            ctx.shell
                .note(format!("Recarga {recarga_id} paga (simulação do banco)."));
            Ok(())
        }
    }
}
