//! `carapi-server import FILE`: a CSV in the public SICAR columns or a SICAR GeoServer WFS
//! GeoJSON, validated whole before anything is written, then streamed into the database.

use std::path::PathBuf;
use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progress::seconds_br;
use carapi_loader::{self as carga, Origin};

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
