//! Bulk load of CAR records at SICAR scale (about 7.5 million records): `carapi-server seed`
//! and `carapi-server import`.
//!
//! The records come from the synthetic generator, a public SICAR CSV, or a SICAR GeoServer
//! WFS GeoJSON ([`wfs`]), and go to the database through a connection of the load's own, not
//! the [`carapi_service::store::Store`]:
//! - SQLite, in two phases. First the origin is read, checked and sorted by CAR code in
//!   bounded memory ([`leitura`], [`ordenar`]), on every core; a bad row refuses the file with
//!   its line (CSV) or feature index (WFS) before the base is touched. Then the winner of each
//!   code is written in code order ([`sqlite`]): into an empty base, appended in one
//!   transaction with the secondary indexes built at the end; into a base that holds records,
//!   inserted or replacing the stored one, one transaction per batch.
//! - PostgreSQL: a first streaming pass validates a file ([`validacao`]); then batches of
//!   [`LOTE`] records go by `COPY ... FROM STDIN` into temporary tables and one set-based upsert
//!   per batch ([`postgres`]); into an empty base the secondary indexes are dropped first and
//!   built at the end.
//!
//! Memory stays bounded whatever the number of records: the sort's budget
//! ([`ordenar::ORCAMENTO`]), a few batches in flight and the database's page cache.
//!
//! Versions: a record replaces a stored one with the same `codigo_car` unless it is older by
//! `data_atualizacao` (a missing one is the oldest), then `dat_criacao` ([`wfs::mais_nova`]);
//! the WFS may serve two versions of one property, and loading the same file twice changes
//! nothing.

mod completar;
pub mod embutidos;
mod ficticios;
pub mod import;
mod leitura;
mod linhas_csv;
pub mod marca;
pub mod municipios;
mod ordenar;
pub mod postgres;
pub mod progresso;
mod registro;
pub mod sinteticos;
mod sqlite;
pub mod validacao;
pub mod wfs;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::import::{ImportError, LeitorCsv};
use crate::sinteticos::Sinteticos;
use carapi_service::dados::Imovel;
use carapi_service::store::StoreError;

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

impl Origem {
    /// What the load is, for its record on the base ([`marca`]): the command that repeats it.
    pub fn descricao(&self) -> String {
        match self {
            Origem::Sinteticos {
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
            Origem::Arquivo(caminho) => format!("import {}", caminho.display()),
        }
    }
}

/// The format of an import file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formato {
    /// Public SICAR CSV columns ([`crate::import::parse_csv`]).
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

impl CargaError {
    /// The line (CSV) or feature index (WFS) of a bad row, when the error is one.
    pub fn linha(&self) -> Option<u64> {
        match self {
            CargaError::Csv(e) => e.linha(),
            CargaError::Wfs(WfsError::Feicao { indice, .. }) => Some(*indice),
            _ => None,
        }
    }
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
    let descricao = format!(
        "{}, iniciada em {}",
        origem.descricao(),
        chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
    );
    let (lidos, c) = if carapi_service::store::postgres::eh_url_postgres(database_url) {
        carregar_postgres(database_url, origem, com_barra, &descricao).await?
    } else {
        carregar_sqlite(database_url, origem, com_barra, &descricao).await?
    };
    marca::concluir(database_url).await?;
    Ok(Relatorio {
        lidos,
        gravados: c.gravados,
        ignorados: c.ignorados,
        indices_reconstruidos: c.indices,
        segundos: inicio.elapsed().as_secs_f64(),
    })
}

/// Creates and migrates the database of `url` and records that the load `descricao` starts
/// writing ([`marca::marcar`]); closed before the load opens its own connection.
async fn migrar(url: &str, descricao: &str) -> Result<(), CargaError> {
    let store = carapi_service::startup::abrir_store(url)
        .await
        .map_err(|e| match e {
            carapi_service::ServerError::Store(s) => CargaError::Store(s),
            outro => CargaError::Url(outro.to_string()),
        })?;
    drop(store);
    if let Some(anterior) = marca::marcar(url, descricao).await? {
        tracing::warn!(%anterior, "a carga anterior nesta base não terminou");
    }
    Ok(())
}

fn em_pe<T>(r: Result<Result<T, CargaError>, tokio::task::JoinError>) -> Result<T, CargaError> {
    r.map_err(|e| CargaError::Interrompida(e.to_string()))?
}

/// SQLite: read and sort everything ([`leitura`]), then write the winners in code order
/// ([`sqlite`]) while the merge ([`ordenar::Vencedores`]) runs on a thread of its own.
async fn carregar_sqlite(
    url: &str,
    origem: Origem,
    com_barra: bool,
    descricao: &str,
) -> Result<(u64, Contagem), CargaError> {
    sqlite::arquivo_do_url(url)?;
    let total = match &origem {
        Origem::Sinteticos { n, .. } => Some(*n as u64),
        Origem::Arquivo(_) => None,
    };
    let barra = progresso::barra(com_barra, total, "lendo");
    let b = barra.clone();
    let t = Instant::now();
    let (ordenador, lidos) =
        em_pe(tokio::task::spawn_blocking(move || leitura::ler(&origem, &b)).await)?;
    barra.finish_and_clear();
    tracing::debug!(
        lidos,
        corridas = ordenador.corridas(),
        segundos = t.elapsed().as_secs_f64(),
        "carga: lidos e ordenados"
    );
    migrar(url, descricao).await?;
    let barra = progresso::barra(com_barra, Some(lidos), "gravando");
    let (url, b) = (url.to_owned(), barra.clone());
    let c = em_pe(
        tokio::task::spawn_blocking(move || -> Result<Contagem, CargaError> {
            let gravador = sqlite::Gravador::abrir(&url)?;
            let vencedores = ordenador.vencedores()?;
            let (tx, rx) = std::sync::mpsc::sync_channel(EM_VOO);
            // Written batches go back to the merge: the same buffers all along.
            let (devolver, vazios) = std::sync::mpsc::sync_channel(EM_VOO + 2);
            std::thread::scope(|s| {
                s.spawn(move || vencedores.enviar(LOTE, &tx, &vazios));
                gravador.gravar(&rx, &devolver, &b)
            })
        })
        .await,
    )?;
    barra.finish_and_clear();
    Ok((lidos, c))
}

/// PostgreSQL: validate a file first ([`validacao`]), then stream batches by `COPY`
/// ([`postgres`]).
async fn carregar_postgres(
    url: &str,
    origem: Origem,
    com_barra: bool,
    descricao: &str,
) -> Result<(u64, Contagem), CargaError> {
    let total = match &origem {
        Origem::Sinteticos { n, .. } => *n as u64,
        Origem::Arquivo(caminho) => {
            let caminho = caminho.clone();
            let barra = progresso::barra(com_barra, None, "validando");
            em_pe(tokio::task::spawn_blocking(move || validacao::validar(&caminho, &barra)).await)?
        }
    };
    migrar(url, descricao).await?;
    let barra = progresso::barra(com_barra, Some(total), "gravando");
    let (tx, rx) = mpsc::channel::<Vec<Imovel>>(EM_VOO);
    let leitor = tokio::task::spawn_blocking(move || produzir(origem, &tx));
    let escrita = postgres::gravar(url, rx, &barra).await;
    let lidos = em_pe(leitor.await.map(Ok))?;
    barra.finish_and_clear();
    // A writer error explains a reader stopped by the closed channel: report it first.
    let c = escrita?;
    Ok((lidos?, c))
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
