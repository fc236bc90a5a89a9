//! `carapi-server seed --synthetic N [--seed S] [--dono-grande C]`.

use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progress::seconds_br;
use carapi_loader::{self as load, Origin};

/// Opções de `seed`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Número de registros sintéticos a gerar (gravados em lotes: qualquer tamanho, memória
    /// limitada).
    #[arg(long = "sinteticos", alias = "synthetic")]
    synthetic: usize,
    /// Semente do gerador (mesma semente, mesmos registros).
    #[arg(long = "semente", alias = "seed", default_value_t = 42)]
    seed: u64,
    /// Dá ao grande proprietário 98.765.432/0001-98 esta quantidade de CARs (padrão 210 quando
    /// N >= 1000).
    #[arg(id = "dono_grande")]
    #[arg(long = "dono-grande", value_name = "CARS")]
    large_owner: Option<usize>,
    /// Sem barra de progresso (de todo modo ela só aparece num terminal).
    #[arg(id = "sem_progresso")]
    #[arg(long = "sem-progresso")]
    without_progress: bool,
    #[command(flatten)]
    database: super::DatabaseArgs,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(cars) = a.large_owner
        && cars > a.synthetic
    {
        anyhow::bail!(
            "--dono-grande {cars} maior que --synthetic {}: o dono teria mais CARs que a base",
            a.synthetic
        );
    }
    super::warn_interrupted_load(&a.database.database).await;
    let origin = Origin::Synthetic {
        n: a.synthetic,
        seed: a.seed,
        large_owner: a.large_owner,
    };
    let r = load::load(&a.database.database, origin, !a.without_progress).await?;
    println!(
        "{} registros sintéticos gravados em {} s ({}/s, seed {})",
        br::format_integer(r.written),
        seconds_br(r.seconds),
        br::format_integer(r.per_second() as u64),
        a.seed
    );
    Ok(ExitCode::SUCCESS)
}
