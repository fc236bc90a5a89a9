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
    /// `n` synthetic records ([`Synthetic`]) from `seed`; with `large_owner`, the first large
    /// owner gets that many CARs ([`Synthetic::with_large_owner`]).
    Synthetic {
        /// How many records.
        n: usize,
        /// Generator seed.
        seed: u64,
        /// CARs of the first large owner, when given.
        large_owner: Option<usize>,
    },
    /// A file in the public SICAR CSV columns, or a SICAR WFS GeoJSON (`Format::de`).
    File(PathBuf),
}

impl Origin {
    /// What the load is, for its record on the base ([`mark`]): the command that repeats it.
    pub(crate) fn description(&self) -> String {
        match self {
            Origin::Synthetic {
                n,
                seed,
                large_owner,
            } => {
                let mut d = format!("seed --synthetic {n} --seed {seed}");
                if let Some(c) = large_owner {
                    d.push_str(&format!(" --dono-grande {c}"));
                }
                d
            }
            Origin::File(path) => format!("import {}", path.display()),
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
    pub(crate) fn de(path: &Path) -> Result<Format, LoadError> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if matches!(ext.as_deref(), Some("geojson" | "json")) {
            return Ok(Format::GeoJson);
        }
        let mut reader = BufReader::new(open(path)?);
        let start = reader.fill_buf().map_err(|e| io(path, e))?;
        let first = start
            .iter()
            .find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF);
        Ok(if first == Some(&b'{') {
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
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
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
    Interrupted(String),
}

impl LoadError {
    /// The line (CSV) or feature index (WFS) of a bad row, when the error is one.
    pub(crate) fn line_of(&self) -> Option<u64> {
        match self {
            LoadError::Csv(e) => e.line_of(),
            LoadError::Wfs(WfsError::Feature { index, .. }) => Some(*index),
            _ => None,
        }
    }
}

fn io(path: &Path, source: std::io::Error) -> LoadError {
    LoadError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn open(path: &Path) -> Result<std::fs::File, LoadError> {
    std::fs::File::open(path).map_err(|e| io(path, e))
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Records read from the source (every version of every record).
    pub(crate) read_count: u64,
    /// Records written: new ones plus stored ones replaced by a version not older.
    pub written: u64,
    /// Versions skipped because the stored one (or one read earlier) is newer.
    pub ignored: u64,
    /// Secondary indexes dropped before and rebuilt after the load (an empty base).
    pub(crate) rebuilt_indices: usize,
    /// Wall time of the load (validation pass included), seconds.
    pub seconds: f64,
}

impl Report {
    /// Records read per second of wall time.
    pub fn per_second(&self) -> f64 {
        self.read_count as f64 / self.seconds.max(1e-9)
    }
}

/// Counts kept by a writer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LoadCount {
    pub(crate) written: u64,
    pub(crate) ignored: u64,
    pub(crate) indices: usize,
}

/// Loads `origem` into the database at `database_url` (`sqlite://FILE` or `postgres://…`),
/// creating and migrating it when needed. With `with_bar`, an indicatif bar with records/s
/// on stderr when stderr is a terminal (hidden otherwise).
///
/// # Errors
/// [`LoadError`]: a bad file (nothing written), an unreadable file, a database error.
pub async fn load(database_url: &str, origin: Origin, with_bar: bool) -> Result<Report, LoadError> {
    let start = Instant::now();
    let description = format!(
        "{}, iniciada em {}",
        origin.description(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    );
    let (read_count, c) = if carapi_service::store::postgres::is_postgres_url(database_url) {
        load_postgres(database_url, origin, with_bar, &description).await?
    } else {
        load_sqlite(database_url, origin, with_bar, &description).await?
    };
    mark::finish(database_url).await?;
    Ok(Report {
        read_count,
        written: c.written,
        ignored: c.ignored,
        rebuilt_indices: c.indices,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Creates and migrates the database of `url` when it is missing (an existing one must be on
/// this binary's schema: only `servir` migrates) and records that the load `descricao` starts
/// writing ([`mark::tag`]); closed before the load opens its own connection.
async fn migrate(url: &str, description: &str) -> Result<(), LoadError> {
    let store =
        carapi_service::startup::open_store_as(url, carapi_service::store::OpenMode::CreateMissing)
            .await
            .map_err(|e| match e {
                carapi_service::ServerError::Store(s) => LoadError::Store(s),
                other => LoadError::Url(other.to_string()),
            })?;
    drop(store);
    if let Some(previous) = mark::tag(url, description).await? {
        tracing::warn!(anterior = %previous, "a carga anterior nesta base não terminou");
    }
    Ok(())
}

fn standing<T>(r: Result<Result<T, LoadError>, tokio::task::JoinError>) -> Result<T, LoadError> {
    r.map_err(|e| LoadError::Interrupted(e.to_string()))?
}

/// SQLite: read and sort everything ([`reading`]), then write the winners in code order
/// ([`sqlite`]) while the merge ([`sort::Winners`]) runs on a thread of its own.
async fn load_sqlite(
    url: &str,
    origin: Origin,
    with_bar: bool,
    description: &str,
) -> Result<(u64, LoadCount), LoadError> {
    sqlite::file_of_url(url)?;
    let total = match &origin {
        Origin::Synthetic { n, .. } => Some(*n as u64),
        Origin::File(_) => None,
    };
    let bar = progress::bar(with_bar, total, "lendo");
    let b = bar.clone();
    let t = Instant::now();
    let (sorter, read_count) =
        standing(tokio::task::spawn_blocking(move || reading::read(&origin, &b)).await)?;
    bar.finish_and_clear();
    tracing::debug!(
        lidos = read_count,
        races = sorter.races(),
        segundos = t.elapsed().as_secs_f64(),
        "carga: lidos e ordenados"
    );
    migrate(url, description).await?;
    let bar = progress::bar(with_bar, Some(read_count), "gravando");
    let (url, b) = (url.to_owned(), bar.clone());
    let c = standing(
        tokio::task::spawn_blocking(move || -> Result<LoadCount, LoadError> {
            let writer = sqlite::Recorder::open(&url)?;
            let winners = sorter.winners()?;
            let (tx, rx) = std::sync::mpsc::sync_channel(IN_FLIGHT);
            // Written batches go back to the merge: the same buffers all along.
            let (give_back, empty) = std::sync::mpsc::sync_channel(IN_FLIGHT + 2);
            std::thread::scope(|s| {
                s.spawn(move || winners.send(BATCH, &tx, &empty));
                writer.write(&rx, &give_back, &b)
            })
        })
        .await,
    )?;
    bar.finish_and_clear();
    Ok((read_count, c))
}

/// PostgreSQL: validate a file first ([`validation`]), then stream batches by `COPY`
/// ([`postgres`]).
async fn load_postgres(
    url: &str,
    origin: Origin,
    with_bar: bool,
    description: &str,
) -> Result<(u64, LoadCount), LoadError> {
    let total = match &origin {
        Origin::Synthetic { n, .. } => *n as u64,
        Origin::File(path) => {
            let path = path.clone();
            let bar = progress::bar(with_bar, None, "validando");
            standing(tokio::task::spawn_blocking(move || validation::validate(&path, &bar)).await)?
        }
    };
    migrate(url, description).await?;
    let bar = progress::bar(with_bar, Some(total), "gravando");
    let (tx, rx) = mpsc::channel::<Vec<Imovel>>(IN_FLIGHT);
    let reader = tokio::task::spawn_blocking(move || produce(origin, &tx));
    let write = postgres::write(url, rx, &bar).await;
    let read_count = standing(reader.await.map(Ok))?;
    bar.finish_and_clear();
    // A writer error explains a reader stopped by the closed channel: report it first.
    let c = write?;
    Ok((read_count?, c))
}

/// Reads `origem` in batches of [`BATCH`] into `tx`; returns how many records were read.
fn produce(origin: Origin, tx: &mpsc::Sender<Vec<Imovel>>) -> Result<u64, LoadError> {
    let mut batch = Vec::with_capacity(BATCH);
    let mut read_count = 0u64;
    let mut push = |i: Imovel, batch: &mut Vec<Imovel>| -> Result<(), LoadError> {
        batch.push(i);
        read_count += 1;
        if batch.len() == BATCH {
            send(tx, std::mem::replace(batch, Vec::with_capacity(BATCH)))?;
        }
        Ok(())
    };
    match origin {
        Origin::Synthetic {
            n,
            seed,
            large_owner,
        } => {
            let mut generator = Synthetic::new(n, seed);
            if let Some(cars) = large_owner {
                generator = generator.with_large_owner(cars);
            }
            for i in generator {
                push(i, &mut batch)?;
            }
        }
        Origin::File(path) => match Format::de(&path)? {
            Format::Csv => {
                let reader = CsvReader::new(BufReader::with_capacity(1 << 16, open(&path)?))?;
                for i in reader.completos() {
                    push(i?, &mut batch)?;
                }
            }
            Format::GeoJson => {
                wfs::walk(open(&path)?, |f| push(f.imovel, &mut batch))?;
            }
        },
    }
    if !batch.is_empty() {
        send(tx, batch)?;
    }
    Ok(read_count)
}

fn send(tx: &mpsc::Sender<Vec<Imovel>>, batch: Vec<Imovel>) -> Result<(), LoadError> {
    tx.blocking_send(batch)
        .map_err(|_| LoadError::Interrupted("o gravador parou".into()))
}
