//! `carapi-server seed --synthetic N [--seed S]`.

use std::process::ExitCode;

use anyhow::Context;

use crate::fonte;
use crate::startup::abrir_store;

/// Options of `seed`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of synthetic records to generate.
    #[arg(long = "synthetic")]
    synthetic: usize,
    /// Seed of the generator (same seed, same records).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    #[command(flatten)]
    banco: super::Banco,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let imoveis = fonte::sinteticos(a.synthetic, a.seed);
    let store = abrir_store(&a.banco.database)
        .await
        .context("abrindo o banco")?;
    let n = store.gravar_imoveis(&imoveis).await?;
    println!("{n} registros CAR sintéticos gravados (seed {})", a.seed);
    Ok(ExitCode::SUCCESS)
}
