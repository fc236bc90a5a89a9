//! `carapi-server pix pay PAYMENT_ID --server URL [--database URL]`.

use std::process::ExitCode;

use anyhow::Context;

use carapi_service::pix::pagamento::pagar_via_webhook;
use carapi_service::startup::abrir_store;

/// PIX subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Comando {
    /// Mark a charge paid in the simulated PSP's book and send the signed webhook to the
    /// running server (which credits only what the book has paid).
    Pay(PayArgs),
}

/// Options of `pix pay`.
#[derive(Debug, clap::Args)]
pub struct PayArgs {
    /// The charge's paymentId (from POST /v1/recarga).
    payment_id: String,
    /// Base URL of the running server, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    server: String,
    /// Webhook secret the server was started with; by default the database's own secret
    /// (the one `carapi-server webhook-secret` prints).
    #[arg(long, env = "CARAPI_WEBHOOK_SECRET", hide_env_values = true)]
    webhook_secret: Option<String>,
    /// The server's database: the simulated PSP's book (and its webhook secret) live there.
    #[command(flatten)]
    banco: super::Banco,
}

pub(super) async fn run(c: Comando) -> anyhow::Result<ExitCode> {
    let Comando::Pay(a) = c;
    let store = abrir_store(&a.banco.database)
        .await
        .context("abrindo o banco")?;
    let segredo = a.webhook_secret.as_deref().filter(|s| !s.trim().is_empty());
    pagar_via_webhook(
        store.as_ref(),
        &a.server,
        segredo,
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
