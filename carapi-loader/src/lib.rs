//! Bulk load of CAR records at SICAR scale (about 7.5 million records): `carapi-server seed`
//! and `carapi-server import`.
//!
//! The records come from the synthetic generator, a public SICAR CSV, or a SICAR GeoServer
//! WFS GeoJSON (`wfs`), and go to the database through a connection of the load's own, not
//! the [`carapi_service::store::Store`]:
//! - SQLite, in two phases. First the origin is read, checked and sorted by CAR code in
//!   bounded memory (`reading`, `sort`), on every core; a bad row refuses the file with
//!   its line (CSV) or feature index (WFS) before the base is touched. Then the winner of each
//!   code is written in code order (`sqlite`): into an empty base, appended in one
//!   transaction with the secondary indexes built at the end; into a base that holds records,
//!   inserted or replacing the stored one, one transaction per batch.
//! - PostgreSQL: a first streaming pass validates a file (`validation`); then batches of
//!   `BATCH` records go by `COPY ... FROM STDIN` into temporary tables and one set-based upsert
//!   per batch (`postgres`); into an empty base the secondary indexes are dropped first and
//!   built at the end.
//!
//! Memory stays bounded whatever the number of records: the sort's budget
//! (`sort::BUDGET`), a few batches in flight and the database's page cache.
//!
//! Versions: a record replaces a stored one with the same `codigo_car` unless it is older by
//! `data_atualizacao` (a missing one is the oldest), then `dat_criacao` (`wfs::newest`);
//! the WFS may serve two versions of one property, and loading the same file twice changes
//! nothing.

#[cfg(test)]
mod bundled;
mod complete;
mod csv_lines;
mod fictitious;
pub mod import;
pub mod mark;
pub mod municipios;
pub(crate) mod postgres;
pub mod progress;
mod reading;
mod record;
mod sort;
mod sqlite;
pub mod synthetic;
pub(crate) mod validation;
pub(crate) mod wfs;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::import::{CsvReader, ImportError};
use crate::synthetic::Synthetic;
use carapi_service::dados::Imovel;
use carapi_service::store::StoreError;

pub use wfs::WfsError;

/// Records per batch: per transaction on SQLite, per `COPY` on PostgreSQL.
pub(crate) const BATCH: usize = 10_000;

/// Batches in flight between the reader and the writer (memory bound: `(IN_FLIGHT + 2) * BATCH`
/// records).
const IN_FLIGHT: usize = 2;

/// Where the records come from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// `n` synthetic records ([`Synthetic`]) from `seed`; with `dono_grande`, the first large
    /// owner gets that many CARs ([`Synthetic::with_large_owner`]).
    Synthetic {
        /// How many records.
        n: usize,
        /// Generator seed.
        seed: u64,
        /// CARs of the first large owner, when given.
        dono_grande: Option<usize>,
    },
    /// A file in the public SICAR CSV columns, or a SICAR WFS GeoJSON (`Format::de`).
    Arquivo(PathBuf),
}

impl Origin {
    /// What the load is, for its record on the base ([`mark`]): the command that repeats it.
    pub(crate) fn description(&self) -> String {
        match self {
            Origin::Synthetic {
                n,
                seed,
                dono_grande,
            } => {
                let mut d = format!("seed --synthetic {n} --seed {seed}");
                if let Some(c) = dono_grande {
                    d.push_str(&format!(" --dono-grande {c}"));
                }
                d
            }
            Origin::Arquivo(caminho) => format!("import {}", caminho.display()),
        }
    }
}

/// The format of an import file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Public SICAR CSV columns ([`crate::import::parse_csv`]).
    Csv,
    /// SICAR GeoServer WFS GeoJSON FeatureCollection ([`wfs`]).
    GeoJson,
}

impl Format {
    /// GeoJSON when the extension is `.geojson` or `.json`, or the first non-blank byte is `{`;
    /// CSV otherwise.
    ///
    /// # Errors
    /// [`LoadError::Io`] when the file cannot be opened or read.
    pub(crate) fn de(caminho: &Path) -> Result<Format, LoadError> {
        let ext = caminho
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if matches!(ext.as_deref(), Some("geojson" | "json")) {
            return Ok(Format::GeoJson);
        }
        let mut reader = BufReader::new(open(caminho)?);
        let inicio = reader.fill_buf().map_err(|e| io(caminho, e))?;
        let primeiro = inicio
            .iter()
            .find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF);
        Ok(if primeiro == Some(&b'{') {
            Format::GeoJson
        } else {
            Format::Csv
        })
    }
}

/// Why a load failed. A validation error means nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A CSV row breaks a rule (line number inside).
    #[error(transparent)]
    Csv(#[from] ImportError),
    /// A WFS feature breaks a rule (feature index inside).
    #[error(transparent)]
    Wfs(#[from] WfsError),
    /// The file cannot be read.
    #[error("{caminho}: {source}")]
    Io {
        /// The file.
        caminho: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Opening or migrating the database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// SQLite failed while loading.
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed while loading.
    #[error("PostgreSQL: {0}")]
    Postgres(#[from] sqlx::Error),
    /// The database URL cannot take a bulk load (an in-memory SQLite URL).
    #[error("{0}")]
    Url(String),
    /// The reader or the writer stopped unexpectedly (a panic).
    #[error("carga interrompida: {0}")]
    Interrompida(String),
}

impl LoadError {
    /// The line (CSV) or feature index (WFS) of a bad row, when the error is one.
    pub(crate) fn line_of(&self) -> Option<u64> {
        match self {
            LoadError::Csv(e) => e.line_of(),
            LoadError::Wfs(WfsError::Feature { indice, .. }) => Some(*indice),
            _ => None,
        }
    }
}

fn io(caminho: &Path, source: std::io::Error) -> LoadError {
    LoadError::Io {
        caminho: caminho.display().to_string(),
        source,
    }
}

fn open(caminho: &Path) -> Result<std::fs::File, LoadError> {
    std::fs::File::open(caminho).map_err(|e| io(caminho, e))
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Records read from the source (every version of every record).
    pub(crate) lidos: u64,
    /// Records written: new ones plus stored ones replaced by a version not older.
    pub gravados: u64,
    /// Versions skipped because the stored one (or one read earlier) is newer.
    pub ignorados: u64,
    /// Secondary indexes dropped before and rebuilt after the load (an empty base).
    pub(crate) indices_reconstruidos: usize,
    /// Wall time of the load (validation pass included), seconds.
    pub segundos: f64,
}

impl Report {
    /// Records read per second of wall time.
    pub fn per_second(&self) -> f64 {
        self.lidos as f64 / self.segundos.max(1e-9)
    }
}

/// Counts kept by a writer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LoadCount {
    pub(crate) gravados: u64,
    pub(crate) ignorados: u64,
    pub(crate) indices: usize,
}

/// Loads `origem` into the database at `database_url` (`sqlite://FILE` or `postgres://…`),
/// creating and migrating it when needed. With `com_barra`, an indicatif bar with records/s
/// on stderr when stderr is a terminal (hidden otherwise).
///
/// # Errors
/// [`LoadError`]: a bad file (nothing written), an unreadable file, a database error.
pub async fn load(
    database_url: &str,
    origem: Origin,
    com_barra: bool,
) -> Result<Report, LoadError> {
    let inicio = Instant::now();
    let descricao = format!(
        "{}, iniciada em {}",
        origem.description(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    );
    let (lidos, c) = if carapi_service::store::postgres::is_postgres_url(database_url) {
        load_postgres(database_url, origem, com_barra, &descricao).await?
    } else {
        load_sqlite(database_url, origem, com_barra, &descricao).await?
    };
    mark::finish(database_url).await?;
    Ok(Report {
        lidos,
        gravados: c.gravados,
        ignorados: c.ignorados,
        indices_reconstruidos: c.indices,
        segundos: inicio.elapsed().as_secs_f64(),
    })
}

/// Creates and migrates the database of `url` when it is missing (an existing one must be on
/// this binary's schema: only `servir` migrates) and records that the load `descricao` starts
/// writing ([`mark::marcar`]); closed before the load opens its own connection.
async fn migrate(url: &str, descricao: &str) -> Result<(), LoadError> {
    let store =
        carapi_service::startup::open_store_as(url, carapi_service::store::OpenMode::CreateMissing)
            .await
            .map_err(|e| match e {
                carapi_service::ServerError::Store(s) => LoadError::Store(s),
                outro => LoadError::Url(outro.to_string()),
            })?;
    drop(store);
    if let Some(anterior) = mark::tag(url, descricao).await? {
        tracing::warn!(%anterior, "a carga anterior nesta base não terminou");
    }
    Ok(())
}

fn standing<T>(r: Result<Result<T, LoadError>, tokio::task::JoinError>) -> Result<T, LoadError> {
    r.map_err(|e| LoadError::Interrompida(e.to_string()))?
}

/// SQLite: read and sort everything ([`reading`]), then write the winners in code order
/// ([`sqlite`]) while the merge ([`sort::Winners`]) runs on a thread of its own.
async fn load_sqlite(
    url: &str,
    origem: Origin,
    com_barra: bool,
    descricao: &str,
) -> Result<(u64, LoadCount), LoadError> {
    sqlite::file_of_url(url)?;
    let total = match &origem {
        Origin::Synthetic { n, .. } => Some(*n as u64),
        Origin::Arquivo(_) => None,
    };
    let barra = progress::bar(com_barra, total, "lendo");
    let b = barra.clone();
    let t = Instant::now();
    let (ordenador, lidos) =
        standing(tokio::task::spawn_blocking(move || reading::read(&origem, &b)).await)?;
    barra.finish_and_clear();
    tracing::debug!(
        lidos,
        races = ordenador.races(),
        segundos = t.elapsed().as_secs_f64(),
        "carga: lidos e ordenados"
    );
    migrate(url, descricao).await?;
    let barra = progress::bar(com_barra, Some(lidos), "gravando");
    let (url, b) = (url.to_owned(), barra.clone());
    let c = standing(
        tokio::task::spawn_blocking(move || -> Result<LoadCount, LoadError> {
            let gravador = sqlite::Recorder::open(&url)?;
            let winners = ordenador.winners()?;
            let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT);
            // Written batches go back to the merge: the same buffers all along.
            let (give_back, vazios) = std::sync::mpsc::sync_channel(IN_FLIGHT + 2);
            std::thread::scope(|s| {
                s.spawn(move || winners.send(BATCH, &tx, &vazios));
                gravador.write(&rx, &give_back, &b)
            })
        })
        .await,
    )?;
    barra.finish_and_clear();
    Ok((lidos, c))
}

/// PostgreSQL: validate a file first ([`validation`]), then stream batches by `COPY`
/// ([`postgres`]).
async fn load_postgres(
    url: &str,
    origem: Origin,
    com_barra: bool,
    descricao: &str,
) -> Result<(u64, LoadCount), LoadError> {
    let total = match &origem {
        Origin::Synthetic { n, .. } => *n as u64,
        Origin::Arquivo(caminho) => {
            let caminho = caminho.clone();
            let barra = progress::bar(com_barra, None, "validando");
            standing(
                tokio::task::spawn_blocking(move || validation::validate(&caminho, &barra)).await,
            )?
        }
    };
    migrate(url, descricao).await?;
    let barra = progress::bar(com_barra, Some(total), "gravando");
    let (tx, rx) = mpsc::channel::<Vec<Imovel>>(IN_FLIGHT);
    let reader = tokio::task::spawn_blocking(move || produce(origem, &tx));
    let escrita = postgres::write(url, rx, &barra).await;
    let lidos = standing(reader.await.map(Ok))?;
    barra.finish_and_clear();
    // A writer error explains a reader stopped by the closed channel: report it first.
    let c = escrita?;
    Ok((lidos?, c))
}

/// Reads `origem` in batches of [`BATCH`] into `tx`; returns how many records were read.
fn produce(origem: Origin, tx: &mpsc::Sender<Vec<Imovel>>) -> Result<u64, LoadError> {
    let mut lote = Vec::with_capacity(BATCH);
    let mut lidos = 0u64;
    let mut empurrar = |i: Imovel, lote: &mut Vec<Imovel>| -> Result<(), LoadError> {
        lote.push(i);
        lidos += 1;
        if lote.len() == BATCH {
            send(tx, std::mem::replace(lote, Vec::with_capacity(BATCH)))?;
        }
        Ok(())
    };
    match origem {
        Origin::Synthetic {
            n,
            seed,
            dono_grande,
        } => {
            let mut gerador = Synthetic::new(n, seed);
            if let Some(cars) = dono_grande {
                gerador = gerador.with_large_owner(cars);
            }
            for i in gerador {
                empurrar(i, &mut lote)?;
            }
        }
        Origin::Arquivo(caminho) => match Format::de(&caminho)? {
            Format::Csv => {
                let reader = CsvReader::new(BufReader::with_capacity(1 << 16, open(&caminho)?))?;
                for i in reader.completos() {
                    empurrar(i?, &mut lote)?;
                }
            }
            Format::GeoJson => {
                wfs::walk(open(&caminho)?, |f| empurrar(f.imovel, &mut lote))?;
            }
        },
    }
    if !lote.is_empty() {
        send(tx, lote)?;
    }
    Ok(lidos)
}

fn send(tx: &mpsc::Sender<Vec<Imovel>>, lote: Vec<Imovel>) -> Result<(), LoadError> {
    tx.blocking_send(lote)
        .map_err(|_| LoadError::Interrompida("o gravador parou".into()))
}
