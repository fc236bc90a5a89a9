//! The SQLite side of a load: its own rusqlite connection (the same libsqlite3-sys as sqlx),
//! one prepared statement per table and operation, fed with the winners of the sort
//! ([`super::sort`]) in code order, so that every B-tree is written in key order.
//!
//! - Into an empty base: the secondary indexes of `imoveis` and `imovel_proprietarios` are
//!   dropped, the records appended and the indexes built again, all in one transaction: a load
//!   that fails or is killed leaves the base as it was. While it runs, the base leaves WAL
//!   mode for a rollback journal when it can (no other connection open): pages appended to an
//!   empty table need no journal, where WAL would write every page twice. A second thread
//!   flushes the file's dirty pages as they are written ([`Flush`]), so that the commit's
//!   `fsync` does not find the whole base still in memory.
//! - Into a base that holds records: each record is inserted, or replaces the stored one unless
//!   that one is newer ([`super::wfs::newest`]), one transaction per batch, in WAL mode
//!   (a running server keeps serving).

use std::str::FromStr;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

use indicatif::ProgressBar;
use rusqlite::{CachedStatement, Connection, OptionalExtension, Transaction, TransactionBehavior};
use sqlx::sqlite::SqliteConnectOptions;

use super::record::{FIELDS, Package, Record};
use super::{LoadCount, LoadError};

/// Page cache of the load's connection, KiB (bounds the writer's memory).
const CACHE_KIB: i64 = 32 * 1024;

/// Page cache while the indexes are built, KiB: also the memory of each of the sorter's
/// threads (`PRAGMA threads`).
const INDEX_CACHE_KIB: i64 = 8 * 1024;

/// The tables a load writes; their secondary indexes are rebuilt after a load into an empty base.
const TABLES: [&str; 2] = ["imoveis", "imovel_proprietarios"];

/// The columns of `imoveis` a load writes, in the order of [`super::record`].
pub(super) const COLUMNS: &str = "codigo_car, status_imovel, condicao, nome_imovel,
    area_total_ha, modulos_fiscais, data_cadastro, data_atualizacao, tipo_imovel, municipio,
    codigo_municipio_ibge, uf, codigo_protocolo, latitude, longitude, matricula_numero,
    matricula_data, matricula_cartorio, tem_recibo";

const VALUES: &str =
    "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19";

/// Replaces a stored record unless it is newer ([`super::wfs::newest`]: `data_atualizacao`,
/// a missing one the oldest, then `data_cadastro`; a tie replaces).
const REPLACE: &str = "UPDATE imoveis SET status_imovel = ?2, condicao = ?3, nome_imovel = ?4,
    area_total_ha = ?5, modulos_fiscais = ?6, data_cadastro = ?7, data_atualizacao = ?8,
    tipo_imovel = ?9, municipio = ?10, codigo_municipio_ibge = ?11, uf = ?12,
    codigo_protocolo = ?13, latitude = ?14, longitude = ?15, matricula_numero = ?16,
    matricula_data = ?17, matricula_cartorio = ?18, tem_recibo = ?19
  WHERE codigo_car = ?1
    AND (COALESCE(?8, '') > COALESCE(data_atualizacao, '')
      OR (COALESCE(?8, '') = COALESCE(data_atualizacao, '') AND ?7 >= data_cadastro))";

const DELETE_OWNERS: &str = "DELETE FROM imovel_proprietarios WHERE codigo_car = ?1";

const INSERT_OWNER: &str =
    "INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome) VALUES (?1, ?2, ?3, ?4)";

/// How often [`Flush`] flushes the base's dirty pages while an empty base is loaded.
const FLUSH_INTERVAL: Duration = Duration::from_millis(250);

/// The file of a SQLite URL, parsed as the store parses it.
///
/// # Errors
/// [`LoadError::Url`] for an in-memory database (nothing would outlive the load) or a URL
/// that does not parse.
pub(super) fn file_of_url(url: &str) -> Result<std::path::PathBuf, LoadError> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Err(LoadError::Url(format!(
            "{url}: um banco em memória não guarda a carga; use sqlite://ARQUIVO"
        )));
    }
    let opts =
        SqliteConnectOptions::from_str(url).map_err(|e| LoadError::Url(format!("{url}: {e}")))?;
    Ok(opts.get_filename().to_path_buf())
}

/// The load's connection to the SQLite base of `url` (already migrated).
pub(super) struct Recorder {
    conn: Connection,
    file: std::path::PathBuf,
    /// Whether `imoveis` was empty when the load began.
    pub(crate) empty: bool,
}

impl Recorder {
    /// Opens the base of `url`.
    ///
    /// # Errors
    /// [`LoadError::Url`], [`LoadError::Sqlite`].
    pub(crate) fn open(url: &str) -> Result<Self, LoadError> {
        let file = file_of_url(url)?;
        let conn = Connection::open(&file)?;
        conn.busy_timeout(Duration::from_secs(30))?;
        // Foreign keys off: a record's row is always written before its owners' rows. Worker
        // threads let the indexes' rebuild sort on both cores.
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -{CACHE_KIB};
             PRAGMA threads = 2;"
        ))?;
        let empty = conn
            .query_row("SELECT 1 FROM imoveis LIMIT 1", [], |_| Ok(()))
            .optional()?
            .is_none();
        Ok(Recorder { conn, file, empty })
    }

    /// Writes every batch of winners received on `rx` (in code order); counts into a
    /// [`LoadCount`].
    ///
    /// # Errors
    /// [`LoadError::Sqlite`], or the first error a batch carries (nothing of an empty base's
    /// load is then kept).
    pub(crate) fn write(
        mut self,
        rx: &Receiver<Result<Package, LoadError>>,
        give_back: &SyncSender<Package>,
        bar: &ProgressBar,
    ) -> Result<LoadCount, LoadError> {
        let c = Belt { rx, give_back };
        let counters = if self.empty {
            self.write_empty(&c, bar)?
        } else {
            self.write_by_batch(&c, bar)?
        };
        self.conn
            .execute_batch("PRAGMA optimize; PRAGMA wal_checkpoint(TRUNCATE);")?;
        Ok(counters)
    }

    fn write_empty(&mut self, c: &Belt<'_>, bar: &ProgressBar) -> Result<LoadCount, LoadError> {
        let without_wal = self
            .conn
            .query_row("PRAGMA journal_mode = DELETE", [], |r| {
                r.get::<_, String>(0)
            })
            .is_ok_and(|mode| mode.eq_ignore_ascii_case("delete"));
        let flush = Flush::start(&self.file);
        let r = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let indices = drop_indexes(&tx)?;
            let mut counters = LoadCount {
                indices: indices.len(),
                ..LoadCount::default()
            };
            {
                let mut cmd = Commands::prepare(&tx, false)?;
                for package in c.rx.iter() {
                    let package = package?;
                    for r in package.iter() {
                        cmd.insert_new(r)?;
                    }
                    counters.written += package.len() as u64;
                    counters.ignored += package.lost;
                    bar.inc(package.len() as u64 + package.lost);
                    c.give_back(package);
                }
            }
            bar.set_message("índices");
            let t = std::time::Instant::now();
            tracing::debug!("carga: registros gravados; índices");
            // Each of the sorter's threads takes up to the cache size: a small one keeps the
            // rebuild's memory bounded, and as fast (measured at 1M records).
            tx.execute_batch(&format!("PRAGMA cache_size = -{INDEX_CACHE_KIB}"))?;
            for sql in &indices {
                tx.execute_batch(sql)?;
            }
            tracing::debug!(
                segundos = t.elapsed().as_secs_f64(),
                "carga: índices feitos"
            );
            tx.commit()?;
            tracing::debug!("carga: transação confirmada");
            Ok(counters)
        })();
        drop(flush);
        if without_wal {
            self.conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
        }
        r
    }

    fn write_by_batch(&mut self, c: &Belt<'_>, bar: &ProgressBar) -> Result<LoadCount, LoadError> {
        let mut counters = LoadCount::default();
        for package in c.rx.iter() {
            let package = package?;
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut c = Commands::prepare(&tx, true)?;
                for r in package.iter() {
                    if c.insert_or_replace(r)? {
                        counters.written += 1;
                    } else {
                        counters.ignored += 1;
                    }
                }
            }
            tx.commit()?;
            counters.ignored += package.lost;
            bar.inc(package.len() as u64 + package.lost);
            c.give_back(package);
        }
        Ok(counters)
    }
}

/// The batches of winners coming from the merge, and the way back for the written ones.
struct Belt<'a> {
    rx: &'a Receiver<Result<Package, LoadError>>,
    give_back: &'a SyncSender<Package>,
}

impl Belt<'_> {
    /// Hands a written batch back for its buffers to be filled again (dropped when the merge
    /// already has enough).
    fn give_back(&self, p: Package) {
        let _ = self.give_back.try_send(p);
    }
}

/// Drops the secondary indexes of [`TABLES`] (those with an SQL definition: not the primary
/// keys'), returning their definitions.
fn drop_indexes(tx: &Transaction<'_>) -> Result<Vec<String>, LoadError> {
    let indices: Vec<(String, String)> = {
        let mut st = tx.prepare(
            "SELECT name, sql FROM sqlite_master
             WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (?1, ?2) ORDER BY name",
        )?;
        st.query_map(TABLES, |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (name, _) in &indices {
        tx.execute_batch(&format!("DROP INDEX \"{}\"", name.replace('"', "\"\"")))?;
    }
    Ok(indices.into_iter().map(|(_, sql)| sql).collect())
}

/// The prepared statements of a load.
struct Commands<'c> {
    insert: CachedStatement<'c>,
    replace: Option<CachedStatement<'c>>,
    delete_owners: Option<CachedStatement<'c>>,
    insert_owner: CachedStatement<'c>,
}

impl<'c> Commands<'c> {
    /// With `upsert`, inserting a stored code does nothing (and [`Self::replace`] runs).
    fn prepare(tx: &'c Transaction<'_>, upsert: bool) -> Result<Self, LoadError> {
        let conflict = if upsert {
            " ON CONFLICT (codigo_car) DO NOTHING"
        } else {
            ""
        };
        let insert = format!("INSERT INTO imoveis ({COLUMNS}) VALUES ({VALUES}){conflict}");
        Ok(Commands {
            insert: tx.prepare_cached(&insert)?,
            replace: upsert.then(|| tx.prepare_cached(REPLACE)).transpose()?,
            delete_owners: upsert
                .then(|| tx.prepare_cached(DELETE_OWNERS))
                .transpose()?,
            insert_owner: tx.prepare_cached(INSERT_OWNER)?,
        })
    }

    /// Binds the record's 19 columns to `st`.
    fn turn_on(st: &mut CachedStatement<'_>, r: Record<'_>) -> Result<(), LoadError> {
        let mut l = r.read();
        for k in 1..=FIELDS {
            st.raw_bind_parameter(k, l.valor())?;
        }
        Ok(())
    }

    /// Inserts a record and its owners (a code not stored yet).
    fn insert_new(&mut self, r: Record<'_>) -> Result<(), LoadError> {
        Self::turn_on(&mut self.insert, r)?;
        self.insert.raw_execute()?;
        self.insert_owners(r)
    }

    /// Inserts a record, or replaces the stored one unless that one is newer; false when a
    /// newer one is stored.
    fn insert_or_replace(&mut self, r: Record<'_>) -> Result<bool, LoadError> {
        Self::turn_on(&mut self.insert, r)?;
        if self.insert.raw_execute()? == 0 {
            let (Some(replace), Some(delete)) = (&mut self.replace, &mut self.delete_owners) else {
                return Ok(false);
            };
            Self::turn_on(replace, r)?;
            if replace.raw_execute()? == 0 {
                return Ok(false);
            }
            delete.raw_bind_parameter(1, super::record::FieldValue::Text(r.codigo()))?;
            delete.raw_execute()?;
        }
        self.insert_owners(r)?;
        Ok(true)
    }

    fn insert_owners(&mut self, r: Record<'_>) -> Result<(), LoadError> {
        let mut l = r.read();
        for _ in 0..FIELDS {
            l.valor();
        }
        let st = &mut self.insert_owner;
        for (order, (documento, name)) in l.owners().enumerate() {
            use super::record::FieldValue::{Integer, Text};
            st.raw_bind_parameter(1, Text(r.codigo()))?;
            st.raw_bind_parameter(2, Integer(order as i64))?;
            st.raw_bind_parameter(3, Text(documento))?;
            st.raw_bind_parameter(4, Text(name))?;
            st.raw_execute()?;
        }
        Ok(())
    }
}

/// A thread that flushes the base file's dirty pages (`fdatasync` on its own handle) every
/// [`FLUSH_INTERVAL`] while it lives: the pages reach the disk while the load goes on,
/// instead of all at its commit. Dropping it stops the thread.
struct Flush {
    _stop: Sender<()>,
}

impl Flush {
    fn start(file: &std::path::Path) -> Option<Self> {
        let f = std::fs::File::open(file).ok()?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("carapi-carga-descarga".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(FLUSH_INTERVAL) {
                    // Only an early start of what the commit does anyway: an error here is
                    // the commit's to report.
                    let _ = f.sync_data();
                }
            })
            .ok()?;
        Some(Flush { _stop: stop })
    }
}
