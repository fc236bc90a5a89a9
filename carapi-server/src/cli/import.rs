//! `carapi-server import FILE`: a CSV in the public SICAR columns or a SICAR GeoServer WFS
//! GeoJSON, validated whole before anything is written, then streamed into the database.

use std::path::PathBuf;
use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progress::seconds_br;
use carapi_loader::{self as load, Origin};

/// Opções de `import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Arquivo CSV nas colunas públicas do SICAR, ou uma FeatureCollection GeoJSON do WFS do
    /// SICAR (`.geojson`/`.json`). Uma linha inválida recusa o arquivo inteiro (sua linha, ou o
    /// índice da feature, é mostrado) e nada é gravado. Um registro substitui o guardado com o
    /// mesmo código, a menos que seja uma versão mais antiga (por data_atualizacao, depois
    /// dat_criacao).
    #[arg(value_name = "ARQUIVO")]
    file: PathBuf,
    /// Sem barra de progresso (de todo modo ela só aparece num terminal).
    #[arg(id = "sem_progresso")]
    #[arg(long = "sem-progresso")]
    without_progress: bool,
    #[command(flatten)]
    database: super::DatabaseArgs,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    super::warn_interrupted_load(&a.database.database).await;
    let origin = Origin::File(a.file.clone());
    let r = load::load(&a.database.database, origin, !a.without_progress)
        .await
        .map_err(|e| match e {
            load::LoadError::Io { .. } => anyhow::anyhow!("{e}"),
            other => anyhow::anyhow!("{}: {other}", a.file.display()),
        })?;
    let mut msg = format!(
        "{} registros CAR importados de {} em {} s",
        br::format_integer(r.written),
        a.file.display(),
        seconds_br(r.seconds)
    );
    if r.ignored > 0 {
        msg.push_str(&format!(
            " ({} versões mais antigas ignoradas)",
            br::format_integer(r.ignored)
        ));
    }
    println!("{msg}");
    Ok(ExitCode::SUCCESS)
}
