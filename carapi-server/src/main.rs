//! `carapi-server`: the reference server's command line.

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

/// mimalloc instead of the system allocator: a bulk load allocates each record's strings on the
/// reader thread and frees them on the writer's, where glibc's allocator spent a third of the
/// load's CPU (a profile of `seed --synthetic`).
#[global_allocator]
static ALOCADOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_env("CARAPI_LOG").unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    carapi_server::cli::run(carapi_server::cli::Cli::parse()).await
}
