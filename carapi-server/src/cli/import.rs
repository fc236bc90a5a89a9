//! `carapi-server import FILE`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::fonte;
use crate::startup::abrir_store;

/// Options of `import`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// CSV file in the public SICAR columns.
    file: PathBuf,
    #[command(flatten)]
    banco: super::Banco,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let arquivo =
        std::fs::File::open(&a.file).with_context(|| format!("abrindo {}", a.file.display()))?;
    let imoveis = fonte::parse_csv(std::io::BufReader::new(arquivo))
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    let store = abrir_store(&a.banco.database)
        .await
        .context("abrindo o banco")?;
    let n = store.gravar_imoveis(&imoveis).await?;
    println!("{n} registros CAR importados de {}", a.file.display());
    Ok(ExitCode::SUCCESS)
}
