//! `carapi-server`: the reference server's command line (`serve`, accounts, bulk loads, the
//! simulated PIX provider, ledger checks) over the `carapi-service` library.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("CARAPI_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    cli::run(cli::Cli::parse()).await
}
