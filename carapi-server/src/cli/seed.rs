//! `carapi-server seed --synthetic N [--seed S] [--dono-grande C]`.

use std::process::ExitCode;

use carapi_sdk::domain::br;

use carapi_loader::progresso::segundos_br;
use carapi_loader::{self as carga, Origem};

/// Options of `seed`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of synthetic records to generate (streamed in batches: any size, bounded memory).
    #[arg(long = "synthetic")]
    synthetic: usize,
    /// Seed of the generator (same seed, same records).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Give the large owner 98.765.432/0001-98 this many CARs (default 210 when N >= 1000).
    #[arg(long = "dono-grande", value_name = "CARS")]
    dono_grande: Option<usize>,
    /// No progress bar (it shows only on a terminal anyway).
    #[arg(long = "sem-progresso")]
    sem_progresso: bool,
    #[command(flatten)]
    banco: super::Banco,
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
    super::avisar_carga_interrompida(&a.banco.database).await;
    let origem = Origem::Sinteticos {
        n: a.synthetic,
        seed: a.seed,
        dono_grande: a.dono_grande,
    };
    let r = carga::carregar(&a.banco.database, origem, !a.sem_progresso).await?;
    println!(
        "{} registros sintéticos gravados em {} s ({}/s, seed {})",
        br::format_inteiro(r.gravados),
        segundos_br(r.segundos),
        br::format_inteiro(r.por_segundo() as u64),
        a.seed
    );
    Ok(ExitCode::SUCCESS)
}
