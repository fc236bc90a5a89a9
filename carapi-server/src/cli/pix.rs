//! `carapi-server pix pay PAYMENT_ID --server URL [--database URL]`.

use std::process::ExitCode;

use carapi_service::pix::payment::pay_via_webhook;

/// PIX subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Mark a charge paid in the simulated PSP's book and send the signed webhook to the
    /// running server (which credits only what the book has paid).
    #[command(name = "pagar", alias = "pay")]
    Pay(PayArgs),
}

/// Options of `pix pay`.
#[derive(Debug, clap::Args)]
pub(crate) struct PayArgs {
    /// The charge's paymentId (from POST /v1/recarga).
    #[arg(value_name = "PAYMENT_ID")]
    payment_id: String,
    /// Base URL of the running server, e.g. http://127.0.0.1:8080.
    #[arg(long = "servidor", alias = "server")]
    server: String,
    /// Webhook secret the server was started with; by default the database's own secret
    /// (the one `carapi-server webhook-secret` prints).
    #[arg(
        long = "segredo-webhook",
        alias = "webhook-secret",
        env = "CARAPI_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    webhook_secret: Option<String>,
    /// The server's database: the simulated PSP's book (and its webhook secret) live there.
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
}

pub(super) async fn run(c: Command) -> anyhow::Result<ExitCode> {
    let Command::Pay(a) = c;
    let store = a.database.open().await?;
    let secret = a.webhook_secret.as_deref().filter(|s| !s.trim().is_empty());
    pay_via_webhook(
        store.as_ref(),
        &a.server,
        secret,
        &a.payment_id,
        chrono::Utc::now(),
    )
    .await?;
    println!(
        "pagamento {} confirmado por webhook em {}",
        a.payment_id, a.server
    );
    Ok(ExitCode::SUCCESS)
}
