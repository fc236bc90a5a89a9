//! `carapi-server seed --synthetic N [--seed S] [--dono-grande C]`.

use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progress::seconds_br;
use carapi_loader::{self as carga, Origin};

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
    #[arg(long = "dono-grande", value_name = "CARS")]
    dono_grande: Option<usize>,
    /// Sem barra de progresso (de todo modo ela só aparece num terminal).
    #[arg(long = "sem-progresso")]
    sem_progresso: bool,
    #[command(flatten)]
    database: super::DatabaseArgs,
}

pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(cars) = a.dono_grande
        && cars > a.synthetic
    {
        anyhow::bail!(
            "--dono-grande {cars} maior que --synthetic {}: o dono teria mais CARs que a base",
            a.synthetic
        );
    }
    super::warn_interrupted_load(&a.database.database).await;
    let origem = Origin::Synthetic {
        n: a.synthetic,
        seed: a.seed,
        dono_grande: a.dono_grande,
    };
    let r = carga::load(&a.database.database, origem, !a.sem_progresso).await?;
    println!(
        "{} registros sintéticos gravados em {} s ({}/s, seed {})",
        br::format_inteiro(r.gravados),
        seconds_br(r.segundos),
        br::format_inteiro(r.per_second() as u64),
        a.seed
    );
    Ok(ExitCode::SUCCESS)
}
