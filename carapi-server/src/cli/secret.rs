//! `carapi-server webhook-secret [--database URL]`: prints the database's webhook secret.

use std::process::ExitCode;

use carapi_service::pix::webhook::database_secret;

/// Options of `webhook-secret`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
}

/// Prints the HMAC secret of `POST /webhooks/pix` stored in the database (generated now when
/// the database has none yet). A server started with `CARAPI_WEBHOOK_SECRET` uses that one
/// instead.
pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let store = a.database.open().await?;
    println!("{}", database_secret(store.as_ref()).await?);
    Ok(ExitCode::SUCCESS)
}
