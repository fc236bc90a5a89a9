//! Bulk load of CAR records at SICAR scale (about 7.5 million records): `carapi-server seed` and
//! `carapi-server import`.
//!
//! The records stream from their source (the synthetic generator, a public SICAR CSV, or a
//! SICAR GeoServer WFS GeoJSON, [`wfs`]) in bounded batches of [`LOTE`] records through a
//! bounded channel to one writer with its own connection, not the [`crate::store::Store`]:
//! - SQLite: one rusqlite connection, one prepared statement per table, one transaction per
//!   batch ([`sqlite`]); into an empty base, an external merge sort by code first
//!   ([`ordenar`]), so that the rows are appended in key order;
//! - PostgreSQL: `COPY ... FROM STDIN` into temporary tables, then one set-based upsert per
//!   batch ([`postgres`]).
//!
//! Into an empty base, the secondary indexes of `imoveis` and `imovel_proprietarios` (whatever
//! the migrations defined: read from `sqlite_master` / `pg_indexes`) are dropped first and built
//! once at the end. Memory stays bounded whatever the number of records: a few batches in
//! flight plus the database's page cache.
//!
//! A file is read twice: a first streaming pass validates every row ([`validacao`]) and refuses
//! the file with the line (CSV) or feature index (WFS) of the first bad one, before anything is
//! written; the second pass loads it.
//!
//! Versions: a record replaces a stored one with the same `codigo_car` unless it is older by
//! `data_atualizacao` (a missing one is the oldest), then `dat_criacao` ([`wfs::mais_nova`]);
//! the WFS may serve two versions of one property, and loading the same file twice changes
//! nothing.

pub mod postgres;
mod ordenar;
mod progresso;
pub mod sqlite;
mod sqlite_vazio;
pub mod validacao;
pub mod wfs;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::dados::import::{ImportError, LeitorCsv};
use crate::dados::{Imovel, Sinteticos};
use crate::store::StoreError;

pub use wfs::WfsError;

/// Records per batch: per transaction on SQLite, per `COPY` on PostgreSQL.
pub const LOTE: usize = 10_000;

/// Batches in flight between the reader and the writer (memory bound: `(EM_VOO + 2) * LOTE`
/// records).
const EM_VOO: usize = 2;

/// Where the records come from.
#[derive(Debug, Clone)]
pub enum Origem {
    /// `n` synthetic records ([`Sinteticos`]) from `seed`; with `dono_grande`, the first large
    /// owner gets that many CARs ([`Sinteticos::com_dono_grande`]).
    Sinteticos {
        /// How many records.
        n: usize,
        /// Generator seed.
        seed: u64,
        /// CARs of the first large owner, when given.
        dono_grande: Option<usize>,
    },
    /// A file in the public SICAR CSV columns, or a SICAR WFS GeoJSON ([`Formato::de`]).
    Arquivo(PathBuf),
}

/// The format of an import file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formato {
    /// Public SICAR CSV columns ([`crate::dados::import::parse_csv`]).
    Csv,
    /// SICAR GeoServer WFS GeoJSON FeatureCollection ([`wfs`]).
    GeoJson,
}

impl Formato {
    /// GeoJSON when the extension is `.geojson` or `.json`, or the first non-blank byte is `{`;
    /// CSV otherwise.
    ///
    /// # Errors
    /// [`CargaError::Io`] when the file cannot be opened or read.
    pub fn de(caminho: &Path) -> Result<Formato, CargaError> {
        let ext = caminho
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if matches!(ext.as_deref(), Some("geojson" | "json")) {
            return Ok(Formato::GeoJson);
        }
        let mut leitor = BufReader::new(abrir(caminho)?);
        let inicio = leitor.fill_buf().map_err(|e| io(caminho, e))?;
        let primeiro = inicio
            .iter()
            .find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF);
        Ok(if primeiro == Some(&b'{') {
            Formato::GeoJson
        } else {
            Formato::Csv
        })
    }
}

/// Why a load failed. A validation error means nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CargaError {
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

fn io(caminho: &Path, source: std::io::Error) -> CargaError {
    CargaError::Io {
        caminho: caminho.display().to_string(),
        source,
    }
}

fn abrir(caminho: &Path) -> Result<std::fs::File, CargaError> {
    std::fs::File::open(caminho).map_err(|e| io(caminho, e))
}

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relatorio {
    /// Records read from the source (every version of every record).
    pub lidos: u64,
    /// Records written: new ones plus stored ones replaced by a version not older.
    pub gravados: u64,
    /// Versions skipped because the stored one (or one read earlier) is newer.
    pub ignorados: u64,
    /// Secondary indexes dropped before and rebuilt after the load (an empty base).
    pub indices_reconstruidos: usize,
    /// Wall time of the load (validation pass included), seconds.
    pub segundos: f64,
}

impl Relatorio {
    /// Records read per second of wall time.
    pub fn por_segundo(&self) -> f64 {
        self.lidos as f64 / self.segundos.max(1e-9)
    }
}

/// Counts kept by a writer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Contagem {
    pub gravados: u64,
    pub ignorados: u64,
    pub indices: usize,
}

/// Loads `origem` into the database at `database_url` (`sqlite://FILE` or `postgres://…`),
/// creating and migrating it when needed. With `com_barra`, an indicatif bar with records/s
/// on stderr when stderr is a terminal (hidden otherwise).
///
/// # Errors
/// [`CargaError`]: a bad file (nothing written), an unreadable file, a database error.
pub async fn carregar(
    database_url: &str,
    origem: Origem,
    com_barra: bool,
) -> Result<Relatorio, CargaError> {
    let inicio = Instant::now();
    let total = match &origem {
        Origem::Sinteticos { n, .. } => *n as u64,
        Origem::Arquivo(caminho) => {
            let caminho = caminho.clone();
            let barra = progresso::barra(com_barra, None, "validando");
            tokio::task::spawn_blocking(move || validacao::validar(&caminho, &barra))
                .await
                .map_err(|e| CargaError::Interrompida(e.to_string()))??
        }
    };
    // Creates and migrates the database; closed before the writer opens its own connection.
    let store = crate::startup::abrir_store(database_url)
        .await
        .map_err(|e| match e {
            crate::ServerError::Store(s) => CargaError::Store(s),
            outro => CargaError::Url(outro.to_string()),
        })?;
    drop(store);

    let barra = progresso::barra(com_barra, Some(total), "gravando");
    let (tx, rx) = mpsc::channel::<Vec<Imovel>>(EM_VOO);
    let leitor = tokio::task::spawn_blocking(move || produzir(origem, &tx));
    let escrita = if crate::store::postgres::eh_url_postgres(database_url) {
        postgres::gravar(database_url, rx, &barra).await
    } else {
        let url = database_url.to_owned();
        let barra = barra.clone();
        tokio::task::spawn_blocking(move || sqlite::gravar(&url, rx, &barra))
            .await
            .map_err(|e| CargaError::Interrompida(e.to_string()))
            .and_then(|r| r)
    };
    let lidos = leitor
        .await
        .map_err(|e| CargaError::Interrompida(e.to_string()))?;
    barra.finish_and_clear();
    // A writer error explains a reader stopped by the closed channel: report it first.
    let c = escrita?;
    let lidos = lidos?;
    Ok(Relatorio {
        lidos,
        gravados: c.gravados,
        ignorados: c.ignorados,
        indices_reconstruidos: c.indices,
        segundos: inicio.elapsed().as_secs_f64(),
    })
}

/// Reads `origem` in batches of [`LOTE`] into `tx`; returns how many records were read.
fn produzir(origem: Origem, tx: &mpsc::Sender<Vec<Imovel>>) -> Result<u64, CargaError> {
    let mut lote = Vec::with_capacity(LOTE);
    let mut lidos = 0u64;
    let mut empurrar = |i: Imovel, lote: &mut Vec<Imovel>| -> Result<(), CargaError> {
        lote.push(i);
        lidos += 1;
        if lote.len() == LOTE {
            enviar(tx, std::mem::replace(lote, Vec::with_capacity(LOTE)))?;
        }
        Ok(())
    };
    match origem {
        Origem::Sinteticos {
            n,
            seed,
            dono_grande,
        } => {
            let mut gerador = Sinteticos::new(n, seed);
            if let Some(cars) = dono_grande {
                gerador = gerador.com_dono_grande(cars);
            }
            for i in gerador {
                empurrar(i, &mut lote)?;
            }
        }
        Origem::Arquivo(caminho) => match Formato::de(&caminho)? {
            Formato::Csv => {
                let leitor = LeitorCsv::new(BufReader::with_capacity(1 << 16, abrir(&caminho)?))?;
                for i in leitor.completos() {
                    empurrar(i?, &mut lote)?;
                }
            }
            Formato::GeoJson => {
                wfs::percorrer(abrir(&caminho)?, |f| empurrar(f.imovel, &mut lote))?;
            }
        },
    }
    if !lote.is_empty() {
        enviar(tx, lote)?;
    }
    Ok(lidos)
}

fn enviar(tx: &mpsc::Sender<Vec<Imovel>>, lote: Vec<Imovel>) -> Result<(), CargaError> {
    tx.blocking_send(lote)
        .map_err(|_| CargaError::Interrompida("o gravador parou".into()))
}
