//! The record reads of the SQLite store (a CAR record with its owners, an owner's items):
//! one reader thread per core, each owning a rusqlite connection with cached prepared
//! statements, taking jobs from one queue. A lookup is one hop to such a thread and back,
//! where through the sqlx pool every statement and every row was a message to the
//! connection's worker thread and back: under a cold-lookup load, most of the reads' CPU went
//! to those thread switches (1M-record base, 8 connections: 4.9k lookups/s through sqlx, 8k
//! through these threads).
//!
//! Rows are decoded from the store's encoding (`lines.rs`): decimals as text with a dot,
//! date-times as `YYYY-MM-DD HH:MM:SS`.

use std::path::Path;
use std::str::FromStr;

use carapi_sdk::{CodigoCar, CpfCnpj};
use chrono::NaiveDateTime;
use crossbeam_channel::{Receiver, Sender, unbounded};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, params};
use rust_decimal::Decimal;
use tokio::sync::oneshot;

use super::rows::{DATE_TIME, corrupt};
use crate::dados::{Imovel, Proprietario, stored};
use crate::store::{OwnerImovel, StoreError};

/// The record of a code, by primary key (the columns its private `RawRow` row reads).
pub const IMOVEL_BY_CODIGO: &str =
    "SELECT codigo_car, status_imovel, condicao, nome_imovel, area_total_ha,
    modulos_fiscais, data_cadastro, data_atualizacao, tipo_imovel, municipio,
    codigo_municipio_ibge, uf, codigo_protocolo, latitude, longitude, matricula_numero,
    matricula_data, matricula_cartorio, tem_recibo
  FROM imoveis WHERE codigo_car = ?1";

/// The owners of a code, by primary key `(codigo_car, ordem)`.
pub const OWNERS_BY_CODIGO: &str =
    "SELECT documento, nome FROM imovel_proprietarios WHERE codigo_car = ?1 ORDER BY ordem";

/// The first codes of an owner, by the index `(documento, codigo_car)`: binds the document and
/// how many codes.
pub const CODIGOS_DO_DOCUMENTO: &str = "SELECT DISTINCT codigo_car FROM imovel_proprietarios WHERE documento = ?1 ORDER BY codigo_car LIMIT ?2";

/// The item columns of the first `?2` records of owner `?1`, in code order (one query: the
/// owner index gives the codes in order, each record by primary key).
pub const ITENS_DO_DOCUMENTO: &str = "SELECT i.codigo_car, i.codigo_protocolo, i.nome_imovel,
    i.matricula_numero, i.municipio, i.uf, i.area_total_ha
  FROM (SELECT DISTINCT codigo_car FROM imovel_proprietarios WHERE documento = ?1
        ORDER BY codigo_car LIMIT ?2) d
  JOIN imoveis i ON i.codigo_car = d.codigo_car
  ORDER BY i.codigo_car";

type ReplyTx<T> = oneshot::Sender<Result<T, StoreError>>;

/// A read, with where its answer goes.
enum Task {
    Imovel(CodigoCar, ReplyTx<Option<Imovel>>),
    Imoveis(CpfCnpj, u32, ReplyTx<(Vec<Imovel>, bool)>),
    Itens(CpfCnpj, u32, ReplyTx<(Vec<OwnerImovel>, bool)>),
}

/// Handle to the reader threads; cloning it shares them. They stop when the last handle is
/// dropped.
#[derive(Clone)]
pub(super) struct Readers {
    queue: Sender<Task>,
}

impl std::fmt::Debug for Readers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Leitores")
    }
}

impl Readers {
    /// Opens one read-only connection to `file` (already migrated, in WAL mode) per core
    /// (2 to 8) and starts a thread for each.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the file cannot be opened; [`StoreError::WriterStopped`]
    /// when a thread cannot be started.
    pub(super) fn open(file: &Path) -> Result<Self, StoreError> {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
        let (queue, tasks) = unbounded();
        for i in 0..n {
            let conn = Connection::open_with_flags(
                file,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            let tasks = tasks.clone();
            std::thread::Builder::new()
                .name(format!("carapi-sqlite-leitor-{i}"))
                .spawn(move || run_loop(&conn, &tasks))
                .map_err(|_| StoreError::WriterStopped)?;
        }
        Ok(Readers { queue })
    }

    async fn ask<T>(&self, task: impl FnOnce(ReplyTx<T>) -> Task) -> Result<T, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.queue
            .send(task(tx))
            .map_err(|_| StoreError::WriterStopped)?;
        rx.await.map_err(|_| StoreError::WriterStopped)?
    }

    /// The record of `codigo` with its owners; `None` when there is none.
    pub(super) async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError> {
        let codigo = codigo.clone();
        self.ask(|r| Task::Imovel(codigo, r)).await
    }

    /// The first `limite` records of `documento` in code order, with their owners, and
    /// whether there are more.
    pub(super) async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        let documento = documento.clone();
        self.ask(|r| Task::Imoveis(documento, limite, r)).await
    }

    /// The first `limite` items of `documento` in code order, and whether there are more.
    pub(super) async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
        let documento = documento.clone();
        self.ask(|r| Task::Itens(documento, limite, r)).await
    }
}

fn run_loop(conn: &Connection, tasks: &Receiver<Task>) {
    for t in tasks {
        // A caller that went away (a cancelled request) cannot be told.
        match t {
            Task::Imovel(codigo, r) => drop(r.send(imovel(conn, codigo.as_str()))),
            Task::Imoveis(doc, limite, r) => drop(r.send(imoveis(conn, &doc, limite))),
            Task::Itens(doc, limite, r) => drop(r.send(itens(conn, &doc, limite))),
        }
    }
}

fn imovel(conn: &Connection, codigo: &str) -> Result<Option<Imovel>, StoreError> {
    let Some(raw) = conn
        .prepare_cached(IMOVEL_BY_CODIGO)?
        .query_row([codigo], RawRow::from_row)
        .optional()?
    else {
        return Ok(None);
    };
    let mut imovel = raw.imovel()?;
    let mut st = conn.prepare_cached(OWNERS_BY_CODIGO)?;
    let mut lines = st.query([codigo])?;
    while let Some(l) = lines.next()? {
        let d: String = l.get(0)?;
        imovel.proprietarios.push(Proprietario {
            documento: CpfCnpj::parse(&d).map_err(|_| corrupt("documento ilegível"))?,
            nome: l.get(1)?,
        });
    }
    Ok(Some(imovel))
}

/// The first codes of `documento` (one more than `limite`, to tell whether there are more),
/// then each record: a test oracle of [`itens`].
fn imoveis(
    conn: &Connection,
    documento: &CpfCnpj,
    limite: u32,
) -> Result<(Vec<Imovel>, bool), StoreError> {
    let mut st = conn.prepare_cached(CODIGOS_DO_DOCUMENTO)?;
    let mut codigos = st
        .query_map(params![documento.as_str(), i64::from(limite) + 1], |l| {
            l.get::<_, String>(0)
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let truncado = codigos.len() > limite as usize;
    codigos.truncate(limite as usize);
    let imoveis = codigos
        .iter()
        .filter_map(|c| imovel(conn, c).transpose())
        .collect::<Result<_, _>>()?;
    Ok((imoveis, truncado))
}

fn itens(
    conn: &Connection,
    documento: &CpfCnpj,
    limite: u32,
) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
    let mut st = conn.prepare_cached(ITENS_DO_DOCUMENTO)?;
    let mut lines = st.query(params![documento.as_str(), i64::from(limite) + 1])?;
    let mut itens = Vec::new();
    while let Some(l) = lines.next()? {
        if itens.len() == limite as usize {
            return Ok((itens, true));
        }
        itens.push(OwnerImovel {
            codigo_car: codigo_car(l.get(0)?)?,
            codigo_protocolo: l.get(1)?,
            nome_imovel: l.get(2)?,
            matricula_numero: l.get(3)?,
            municipio: l.get(4)?,
            uf: stored("uf", l.get::<_, Option<String>>(5)?.as_deref()).map_err(corrupt)?,
            area_total_ha: decimal(l.get(6)?, "area")?.unwrap_or_default(),
        });
    }
    Ok((itens, false))
}

fn codigo_car(s: String) -> Result<CodigoCar, StoreError> {
    CodigoCar::parse(&s).map_err(|_| corrupt("código CAR ilegível"))
}

fn decimal(s: Option<String>, field: &str) -> Result<Option<Decimal>, StoreError> {
    s.map(|s| Decimal::from_str(&s).map_err(|_| corrupt(format!("imóvel: {field}"))))
        .transpose()
}

fn date_time(s: Option<String>, field: &str) -> Result<Option<NaiveDateTime>, StoreError> {
    s.map(|s| {
        NaiveDateTime::parse_from_str(&s, DATE_TIME)
            .map_err(|_| corrupt(format!("imóvel: {field}")))
    })
    .transpose()
}

/// A row of [`IMOVEL_BY_CODIGO`] as stored, before its values are decoded.
struct RawRow {
    texts: [Option<String>; 17],
    codigo_municipio_ibge: i64,
    has_recibo: i64,
}

impl RawRow {
    /// Columns 0-9 and 11-17 are text, 10 and 18 integers.
    fn from_row(l: &Row<'_>) -> rusqlite::Result<Self> {
        let mut texts: [Option<String>; 17] = Default::default();
        for (t, column) in texts.iter_mut().zip((0..10).chain(11..18)) {
            *t = l.get(column)?;
        }
        Ok(RawRow {
            texts,
            codigo_municipio_ibge: l.get(10)?,
            has_recibo: l.get(18)?,
        })
    }

    /// The record (without its owners).
    fn imovel(self) -> Result<Imovel, StoreError> {
        let [
            codigo,
            status,
            condicao,
            name,
            area,
            modulos,
            cadastro,
            update,
            tipo,
            municipio,
            uf,
            protocolo,
            latitude,
            longitude,
            matricula_numero,
            matricula_data,
            matricula_cartorio,
        ] = self.texts;
        Ok(Imovel {
            codigo_car: codigo_car(codigo.unwrap_or_default())?,
            status_imovel: stored("status_imovel", status.as_deref()).map_err(corrupt)?,
            condicao,
            nome_imovel: name,
            area_total_ha: decimal(area, "area")?.unwrap_or_default(),
            modulos_fiscais: decimal(modulos, "modulos")?,
            data_cadastro: date_time(cadastro, "data_cadastro")?.unwrap_or_default(),
            data_atualizacao: date_time(update, "data_atualizacao")?,
            tipo_imovel: stored("tipo_imovel", tipo.as_deref()).map_err(corrupt)?,
            municipio: municipio.unwrap_or_default(),
            codigo_municipio_ibge: self.codigo_municipio_ibge as u32,
            uf: stored("uf", uf.as_deref()).map_err(corrupt)?,
            codigo_protocolo: protocolo,
            latitude: decimal(latitude, "latitude")?,
            longitude: decimal(longitude, "longitude")?,
            matricula_numero,
            matricula_data,
            matricula_cartorio,
            proprietarios: Vec::new(),
            has_recibo: self.has_recibo != 0,
        })
    }
}
