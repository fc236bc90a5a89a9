//! `carapi-server`: the reference server's command line (`serve`, accounts, bulk loads, the
//! simulated PIX provider, ledger checks) over the `carapi-service` library.

mod cli;
mod log;

use std::process::ExitCode;

use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    log::init(cli.log_format);
    cli::run(cli).await
}
