//! The `carapi-server` command line: `serve`, `account create | rotate | revoke`,
//! `import`, `seed --synthetic`, `pix pay`, `ledger check`, `webhook-secret`.

mod backup;
mod conta;
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
#[command(name = "carapi-server", version)]
pub(crate) struct Cli {
    /// Formato do log no stderr: texto (uma linha legível por evento; cores só num terminal) ou
    /// json (um objeto por linha). O filtro é CARAPI_LOG (padrão info); o log de acesso tem uma
    /// linha por requisição no alvo carapi::acesso.
    #[arg(
        long = "log-formato",
        env = "CARAPI_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text,
        global = true
    )]
    pub(crate) log_format: LogFormat,
    /// O que fazer.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// O formato do log no stderr (`--log-formato`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// Uma linha legível por evento.
    #[value(name = "texto", alias = "text")]
    Text,
    /// Um objeto JSON por linha, os campos do evento no primeiro nível.
    #[value(name = "json")]
    Json,
}

/// A opção `--banco` compartilhada pelos comandos que abrem o banco.
#[derive(Debug, clap::Args)]
pub(crate) struct DatabaseArgs {
    /// URL do banco: `sqlite://FILE` (embutido, o padrão) ou `postgres://USER@HOST/DB`.
    /// `servir` o cria e migra, `importar` e `semear` criam um que não exista; os comandos de
    /// administração abrem um banco existente cujo esquema é o deste binário.
    #[arg(
        long = "banco",
        alias = "database",
        env = "CARAPI_DATABASE_URL",
        hide_env_values = true,
        default_value = DEFAULT_DATABASE_URL
    )]
    pub(crate) database: String,
}

/// O banco de um comando de administração (`conta`, `pix pagar`, `razao conferir`,
/// `segredo-webhook`): um existente, nunca criado nem migrado sem --criar-banco.
#[derive(Debug, clap::Args)]
pub(crate) struct AdminDatabaseArgs {
    #[command(flatten)]
    pub(crate) url: DatabaseArgs,
    /// Cria e migra o banco quando ele não existe (um existente nunca é migrado por este
    /// comando: `servir` o faz).
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
    if let Some(load) = carapi_loader::mark::interrupted(url).await {
        tracing::warn!(carga = %load, "carga interrompida nesta base");
        eprintln!(
            "atenção: a carga \"{load}\" começou nesta base e não terminou; a base pode estar \
             incompleta (repetir a carga a completa)"
        );
    }
}

/// Subcomandos.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve a API (cria e migra o banco, carrega os dados embutidos num banco vazio).
    #[command(name = "servir", alias = "serve")]
    Serve(serve::Args),
    /// Gerencia as contas da API.
    #[command(name = "conta", alias = "account")]
    Conta {
        /// Subcomando de conta.
        #[command(subcommand)]
        command: conta::Command,
    },
    /// Importa registros CAR de um CSV público do SICAR ou de um GeoJSON do WFS do SICAR
    /// (idempotente; lido em fluxo).
    #[command(name = "importar", alias = "import")]
    Import(import::Args),
    /// Gera registros CAR sintéticos realistas.
    #[command(name = "semear", alias = "seed")]
    Seed(seed::Args),
    /// Faz o papel do provedor de pagamentos PIX.
    #[command(name = "pix")]
    Pix {
        /// Subcomando PIX.
        #[command(subcommand)]
        command: pix::Command,
    },
    /// Conferências do razão.
    #[command(name = "razao", alias = "ledger")]
    Ledger {
        /// Subcomando do razão.
        #[command(subcommand)]
        command: ledger::Command,
    },
    /// Mostra o segredo de webhook (HMAC-SHA256 de POST /webhooks/pix) que o servidor usa: o
    /// dado por --segredo-webhook/--arquivo-segredo-webhook ou por suas variáveis
    /// CARAPI_WEBHOOK_SECRET/CARAPI_WEBHOOK_SECRET_FILE, senão o do banco, sem criar um a menos
    /// que --criar-segredo.
    #[command(name = "segredo-webhook", alias = "webhook-secret")]
    WebhookSecret(secret::Args),
    /// Grava uma cópia consistente de um banco SQLite enquanto o servidor roda (VACUUM INTO,
    /// modo 0600); para PostgreSQL use pg_dump.
    #[command(name = "backup")]
    Backup(backup::Args),
}

/// Parses the arguments and runs the command; errors go to stderr with exit code 1.
pub(crate) async fn run(cli: Cli) -> ExitCode {
    let r = match cli.command {
        Command::Serve(a) => serve::run(a).await,
        Command::Conta { command } => conta::run(command).await,
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
