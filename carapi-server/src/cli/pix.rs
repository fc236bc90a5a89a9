//! `carapi-server pix pagar PAYMENT_ID --servidor URL [--banco URL]`.

use std::process::ExitCode;

use carapi_service::pix::payment::pay_via_webhook;

/// Subcomandos PIX.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Marca uma cobrança como paga no livro do PSP simulado e envia o webhook assinado ao
    /// servidor em execução (que credita só o que o livro pagou).
    #[command(name = "pagar", alias = "pay")]
    Pay(PayArgs),
}

/// Opções de `pix pay`.
#[derive(Debug, clap::Args)]
pub(crate) struct PayArgs {
    /// O paymentId da cobrança (de POST /v1/recarga).
    #[arg(value_name = "PAYMENT_ID")]
    payment_id: String,
    /// URL base do servidor em execução, ex.: http://127.0.0.1:8080.
    #[arg(long = "servidor", alias = "server")]
    server: String,
    /// O segredo com que o servidor foi iniciado (as mesmas opções e variáveis de `servir`).
    #[command(flatten)]
    webhook_secret: super::webhook_secret_args::WebhookSecretArgs,
    /// O banco do servidor: o livro do PSP simulado (e seu segredo de webhook) fica nele.
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
}

/// Signs with the secret given as `servir` takes it, else with the database's own (never
/// creating one: a database without it belongs to a server started with a configured secret);
/// the charge is marked paid only once the server accepts the signature
/// ([`pay_via_webhook`]).
pub(super) async fn run(c: Command) -> anyhow::Result<ExitCode> {
    let Command::Pay(a) = c;
    let configured = a.webhook_secret.resolve().map_err(anyhow::Error::msg)?;
    let store = a.database.open().await?;
    let secret = match configured {
        Some(s) => s,
        None => carapi_service::pix::webhook::stored_secret(store.as_ref())
            .await?
            .ok_or_else(|| anyhow::anyhow!("{}", super::secret::NO_SECRET))?,
    };
    pay_via_webhook(
        store.as_ref(),
        &a.server,
        &secret,
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
