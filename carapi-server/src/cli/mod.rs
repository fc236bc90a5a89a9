//! The `carapi-server` command line: `serve`, `account create | rotate | revoke`,
//! `import`, `seed --synthetic`, `pix pay`, `ledger check`, `webhook-secret`.

mod account;
mod backup;
mod import;
mod keys;
mod ledger;
mod pix;
mod secret;
mod seed;
mod serve;
mod webhook_secret_args;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use carapi_service::config::DEFAULT_DATABASE_URL;
use carapi_service::startup::open_store_as;
use carapi_service::store::{OpenMode, Store};

/// Servidor de referência da API carapi /v1.
#[derive(Debug, Parser)]
#[command(name = "carapi-server", version, about)]
pub(crate) struct Cli {
    /// Formato do log no stderr: texto (uma linha legível por evento; cores só num terminal) ou
    /// json (um objeto por linha). O filtro é CARAPI_LOG (padrão info); o log de acesso tem uma
    /// linha por requisição no alvo carapi::acesso.
    #[arg(
        long = "log-formato",
        env = "CARAPI_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Texto,
        global = true
    )]
    pub(crate) log_format: LogFormat,
    /// O que fazer.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The log's format on stderr (`--log-formato`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Uma linha legível por evento.
    #[value(name = "texto", alias = "text")]
    Texto,
    /// Um objeto JSON por linha, os campos do evento no primeiro nível.
    #[value(name = "json")]
    Json,
}

/// The `--database` option shared by the commands that open the store.
#[derive(Debug, clap::Args)]
pub(crate) struct DatabaseArgs {
    /// Database URL: `sqlite://FILE` (embedded, the default) or `postgres://USER@HOST/DB`.
    /// `servir` creates and migrates it, `importar` and `semear` create a missing one; the
    /// admin commands open an existing database whose schema is this binary's.
    #[arg(
        long = "banco",
        alias = "database",
        env = "CARAPI_DATABASE_URL",
        hide_env_values = true,
        default_value = DEFAULT_DATABASE_URL
    )]
    pub(crate) database: String,
}

/// The database of an admin command (`conta`, `pix pagar`, `razao conferir`,
/// `segredo-webhook`): an existing one, never created nor migrated unless --criar-banco.
#[derive(Debug, clap::Args)]
pub(crate) struct AdminDatabaseArgs {
    #[command(flatten)]
    pub(crate) url: DatabaseArgs,
    /// Create and migrate the database when it does not exist (an existing one is never
    /// migrated by this command: `servir` does it).
    #[arg(long = "criar-banco", alias = "create-database")]
    pub(crate) create_database: bool,
}

impl AdminDatabaseArgs {
    /// How this command opens the store: an existing database only, unless --criar-banco.
    pub(crate) fn mode(&self) -> OpenMode {
        if self.create_database {
            OpenMode::CreateMissing
        } else {
            OpenMode::Existing
        }
    }

    /// Opens the store as [`AdminDatabaseArgs::mode`] says.
    pub(crate) async fn open(&self) -> anyhow::Result<std::sync::Arc<dyn Store>> {
        open_store_as(&self.url.database, self.mode())
            .await
            .map_err(|e| anyhow::anyhow!("abrindo o banco: {e}"))
    }
}

/// Says on stderr when a load on the base of `url` started and did not finish
/// ([`carapi_loader::mark`]): `serve` at start, `import` and `seed` before they load.
async fn warn_interrupted_load(url: &str) {
    if let Some(carga) = carapi_loader::mark::interrupted(url).await {
        tracing::warn!(%carga, "carga interrompida nesta base");
        eprintln!(
            "atenção: a carga \"{carga}\" começou nesta base e não terminou; a base pode estar \
             incompleta (repetir a carga a completa)"
        );
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (creates and migrates the database, loads bundled data into an empty one).
    #[command(name = "servir", alias = "serve")]
    Serve(serve::Args),
    /// Manage API accounts.
    #[command(name = "conta", alias = "account")]
    Account {
        /// Account subcommand.
        #[command(subcommand)]
        command: account::Command,
    },
    /// Import CAR records from a public SICAR CSV or a SICAR WFS GeoJSON (idempotent; streamed).
    #[command(name = "importar", alias = "import")]
    Import(import::Args),
    /// Generate realistic synthetic CAR records.
    #[command(name = "semear", alias = "seed")]
    Seed(seed::Args),
    /// Play the PIX payment provider.
    #[command(name = "pix")]
    Pix {
        /// PIX subcommand.
        #[command(subcommand)]
        command: pix::Command,
    },
    /// Ledger checks.
    #[command(name = "razao", alias = "ledger")]
    Ledger {
        /// Ledger subcommand.
        #[command(subcommand)]
        command: ledger::Command,
    },
    /// Print the database's webhook secret (HMAC-SHA256 of POST /webhooks/pix), generated on
    /// first start; CARAPI_WEBHOOK_SECRET overrides it in `serve`.
    #[command(name = "segredo-webhook", alias = "webhook-secret")]
    WebhookSecret(secret::Args),
    /// Write a consistent copy of a SQLite database while the server runs (VACUUM INTO, mode
    /// 0600); for PostgreSQL use pg_dump.
    #[command(name = "backup")]
    Backup(backup::Args),
}

/// Parses the arguments and runs the command; errors go to stderr with exit code 1.
pub(crate) async fn run(cli: Cli) -> ExitCode {
    let r = match cli.command {
        Command::Serve(a) => serve::run(a).await,
        Command::Account { command } => account::run(command).await,
        Command::Import(a) => import::run(a).await,
        Command::Seed(a) => seed::run(a).await,
        Command::Pix { command } => pix::run(command).await,
        Command::Ledger { command } => ledger::run(command).await,
        Command::WebhookSecret(a) => secret::run(a).await,
        Command::Backup(a) => backup::run(a).await,
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("erro: {e:#}");
            ExitCode::FAILURE
        }
    }
}
