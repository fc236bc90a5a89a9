//! `carapi-server segredo-webhook [--banco URL]`: prints the webhook secret the server uses.

use std::process::ExitCode;

use carapi_service::pix::webhook::{database_secret, stored_secret};

/// What is said when the database has no webhook secret and none is given.
pub(super) const NO_SECRET: &str = "o banco não tem segredo de webhook (`servir` cria um no \
    primeiro início quando não recebe --segredo-webhook nem --arquivo-segredo-webhook); dê o \
    segredo com que o servidor foi iniciado (CARAPI_WEBHOOK_SECRET_FILE ou \
    CARAPI_WEBHOOK_SECRET), ou crie o do banco com `segredo-webhook --criar-segredo`";

/// Opções de `webhook-secret`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// O segredo com que o servidor foi iniciado, quando foi (as mesmas opções de `servir`).
    #[command(flatten)]
    webhook_secret: super::webhook_secret_args::WebhookSecretArgs,
    /// Cria e guarda o segredo do banco quando ele ainda não tem um (sem esta opção nada é
    /// escrito no banco).
    #[arg(long = "criar-segredo", alias = "create-secret")]
    create: bool,
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
}

/// Prints the HMAC secret of `POST /webhooks/pix` that `servir` with the same options and
/// environment uses: the configured one (`CARAPI_WEBHOOK_SECRET_FILE`, `CARAPI_WEBHOOK_SECRET`
/// or their flags), else the database's own. A database without one gets one only with
/// `--criar-segredo`; else the command fails (exit 1) and writes nothing.
pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(s) = a.webhook_secret.resolve().map_err(anyhow::Error::msg)? {
        println!("{s}");
        return Ok(ExitCode::SUCCESS);
    }
    let store = a.database.open().await?;
    let secret = if a.create {
        database_secret(store.as_ref()).await?
    } else {
        stored_secret(store.as_ref())
            .await?
            .ok_or_else(|| anyhow::anyhow!("{NO_SECRET}"))?
    };
    println!("{secret}");
    Ok(ExitCode::SUCCESS)
}
