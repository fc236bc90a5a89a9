//! `carapi-server import FILE`: a CSV in the public SICAR columns or a SICAR GeoServer WFS
//! GeoJSON, validated whole before anything is written, then streamed into the database.

use std::path::PathBuf;
use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progress::seconds_br;
use carapi_loader::{self as carga, Origin};

/// Options of `import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// CSV file in the public SICAR columns, or a SICAR WFS GeoJSON FeatureCollection
    /// (`.geojson`/`.json`). A bad row refuses the whole file (its line, or feature index, is
    /// printed) and nothing is written. A record replaces a stored one with the same code
    /// unless it is an older version (by data_atualizacao, then dat_criacao).
    #[arg(value_name = "ARQUIVO")]
    file: PathBuf,
    /// No progress bar (it shows only on a terminal anyway).
    #[arg(long = "sem-progresso")]
    sem_progresso: bool,
    #[command(flatten)]
    database: super::DatabaseArgs,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    super::warn_interrupted_load(&a.database.database).await;
    let origem = Origin::Arquivo(a.file.clone());
    let r = carga::load(&a.database.database, origem, !a.sem_progresso)
        .await
        .map_err(|e| match e {
            carga::LoadError::Io { .. } => anyhow::anyhow!("{e}"),
            outro => anyhow::anyhow!("{}: {outro}", a.file.display()),
        })?;
    let mut msg = format!(
        "{} registros CAR importados de {} em {} s",
        br::format_inteiro(r.gravados),
        a.file.display(),
        seconds_br(r.segundos)
    );
    if r.ignorados > 0 {
        msg.push_str(&format!(
            " ({} versões mais antigas ignoradas)",
            br::format_inteiro(r.ignorados)
        ));
    }
    println!("{msg}");
    Ok(ExitCode::SUCCESS)
}
