//! The `carapi-server` command line: `serve`, `account create | rotate | revoke`,
//! `import`, `seed --synthetic`, `pix pay`, `ledger check`, `webhook-secret`.

mod account;
mod chaves;
mod import;
mod ledger;
mod pix;
mod seed;
mod segredo;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use carapi_service::config::DATABASE_URL_PADRAO;

/// Reference server for the carapi /v1 API.
#[derive(Debug, Parser)]
#[command(name = "carapi-server", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub comando: Comando,
}

/// The `--database` option shared by the commands that open the store.
#[derive(Debug, clap::Args)]
pub struct Banco {
    /// Database URL (created when missing): `sqlite://FILE` (embedded, the default) or
    /// `postgres://USER@HOST/DB`.
    #[arg(long = "database", env = "CARAPI_DATABASE_URL", default_value = DATABASE_URL_PADRAO)]
    pub database: String,
}

/// Says on stderr when a load on the base of `url` started and did not finish
/// ([`carapi_loader::marca`]): `serve` at start, `import` and `seed` before they load.
async fn avisar_carga_interrompida(url: &str) {
    if let Some(carga) = carapi_loader::marca::interrompida(url).await {
        tracing::warn!(%carga, "carga interrompida nesta base");
        eprintln!(
            "atenção: a carga \"{carga}\" começou nesta base e não terminou; a base pode estar \
             incompleta (repetir a carga a completa)"
        );
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Comando {
    /// Serve the API (creates and migrates the database, loads bundled data into an empty one).
    Serve(serve::Args),
    /// Manage API accounts.
    Account {
        /// Account subcommand.
        #[command(subcommand)]
        comando: account::Comando,
    },
    /// Import CAR records from a public SICAR CSV or a SICAR WFS GeoJSON (idempotent; streamed).
    Import(import::Args),
    /// Generate realistic synthetic CAR records.
    Seed(seed::Args),
    /// Play the PIX payment provider.
    Pix {
        /// PIX subcommand.
        #[command(subcommand)]
        comando: pix::Comando,
    },
    /// Ledger checks.
    Ledger {
        /// Ledger subcommand.
        #[command(subcommand)]
        comando: ledger::Comando,
    },
    /// Print the database's webhook secret (HMAC-SHA256 of POST /webhooks/pix), generated on
    /// first start; CARAPI_WEBHOOK_SECRET overrides it in `serve`.
    WebhookSecret(segredo::Args),
}

/// Parses the arguments and runs the command; errors go to stderr with exit code 1.
pub async fn run(cli: Cli) -> ExitCode {
    let r = match cli.comando {
        Comando::Serve(a) => serve::run(a).await,
        Comando::Account { comando } => account::run(comando).await,
        Comando::Import(a) => import::run(a).await,
        Comando::Seed(a) => seed::run(a).await,
        Comando::Pix { comando } => pix::run(comando).await,
        Comando::Ledger { comando } => ledger::run(comando).await,
        Comando::WebhookSecret(a) => segredo::run(a).await,
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("erro: {e:#}");
            ExitCode::FAILURE
        }
    }
}
