//! `carapi-server pix pay PAYMENT_ID --server URL`.

use std::process::ExitCode;

use anyhow::Context;

use crate::config::WEBHOOK_SECRET_PADRAO;
use crate::startup::{abrir_store, pagar_via_webhook};

/// PIX subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Comando {
    /// Mark a charge paid and send the signed webhook to the running server.
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
    /// Webhook secret the server was started with.
    #[arg(long, env = "CARAPI_WEBHOOK_SECRET", default_value = WEBHOOK_SECRET_PADRAO, hide_default_value = true)]
    webhook_secret: String,
    /// Also mark the charge paid in the simulated PSP's book in this database (so the
    /// reconciliation job would find it even if the webhook were lost).
    #[arg(long = "database", env = "CARAPI_DATABASE_URL")]
    database: Option<String>,
}

pub(super) async fn run(c: Comando) -> anyhow::Result<ExitCode> {
    let Comando::Pay(a) = c;
    let store = match &a.database {
        Some(url) => Some(abrir_store(url).await.context("abrindo o banco")?),
        None => None,
    };
    pagar_via_webhook(
        store.as_deref(),
        &a.server,
        &a.webhook_secret,
        &a.payment_id,
    )
    .await?;
    println!(
        "pagamento {} confirmado por webhook em {}",
        a.payment_id, a.server
    );
    Ok(ExitCode::SUCCESS)
}
