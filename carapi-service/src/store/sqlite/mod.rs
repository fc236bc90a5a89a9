//! [`Store`] over SQLite (sqlx 0.8) in WAL mode.
//!
//! Writes go through a single-connection pool and every read-then-write transaction starts with
//! `BEGIN IMMEDIATE`, so the balance check and the debit cannot interleave with another writer,
//! in this process or another one sharing the file (`busy_timeout` makes other processes wait
//! instead of failing). Reads use a separate pool and never block writers (WAL).
//!
//! The lookups (charges and uncharged history rows) go to a dedicated writer thread instead
//! ([`writer`]): one transaction per lookup, in one hop, group-committed. An in-memory URL
//! (`sqlite::memory:`) gets a private temporary database file, removed with the store, so that
//! the writer's connection sees the same database as the pools.

mod consultas;
mod contas;
mod coordination;
mod estorno;
mod file;
mod historico;
mod imoveis;
mod keys;
mod psp;
mod reader;
mod recargas;
mod retencao;
mod rows;
mod settings;
mod wal;
mod writer;

pub use reader::{CODIGOS_DO_DOCUMENTO, IMOVEL_BY_CODIGO, ITENS_DO_DOCUMENTO, OWNERS_BY_CODIGO};

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

// `writer` reaches these as `super::{ms, first_day_of_month}`.
use rows::{first_day_of_month, ms};

use super::schema;
use chrono::{DateTime, Utc};

use super::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// SQLite implementation of [`Store`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    write: SqlitePool,
    reading: SqlitePool,
    /// History and usage reads: their own small pool, so that they never hold the
    /// connections balance reads and lookups need.
    historico: SqlitePool,
    /// The lookup writer thread.
    writer: writer::Writer,
    /// The record reads' threads.
    readers: reader::Readers,
    /// The folder of an in-memory URL's database file; declared last, so it is removed after
    /// the connections above are dropped.
    _temporary: Option<Arc<tempfile::TempDir>>,
}

impl SqliteStore {
    /// Opens (creating when missing) and migrates the database at `url` (`sqlite://file.db`, or
    /// `sqlite::memory:` for a private temporary database removed with the store). The database
    /// and its `-wal`/`-shm` files are made readable by the server's user only (mode `0600`).
    ///
    /// # Errors
    /// [`StoreError`] when the URL is invalid, the file cannot be opened or migrations fail;
    /// [`StoreError::Schema`] for a database a newer binary migrated.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::open(url, OpenMode::Migrate).await
    }

    /// Opens the database at `url` as `mode` says ([`OpenMode`]): [`SqliteStore::connect`] for
    /// [`OpenMode::Migrate`]; with [`OpenMode::Existing`] a missing file is an error and
    /// nothing is created or migrated.
    ///
    /// # Errors
    /// As [`SqliteStore::connect`]; [`StoreError::Schema`] for a missing file or a schema that
    /// is not this binary's where it may not be migrated.
    pub async fn open(url: &str, mode: OpenMode) -> Result<Self, StoreError> {
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let (url, temporary) = if memory {
            let dir = tempfile::Builder::new()
                .prefix("carapi-memoria-")
                .tempdir()
                .map_err(sqlx::Error::Io)?;
            (
                format!("sqlite://{}", dir.path().join("carapi.db").display()),
                Some(Arc::new(dir)),
            )
        } else {
            (url.to_owned(), None)
        };
        let opts = SqliteConnectOptions::from_str(&url)?;
        let exists = memory || opts.get_filename().exists();
        let migrate = match mode {
            OpenMode::Migrate => true,
            OpenMode::CreateMissing => !exists,
            OpenMode::Existing => false,
        };
        if !exists && !migrate {
            return Err(StoreError::Schema(format!(
                "o banco {} não existe (só `carapi-server servir`, `importar`, `semear` ou `--criar-banco` criam um banco)",
                opts.get_filename().display()
            )));
        }
        let opts = opts
            .create_if_missing(migrate)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30))
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal);
        file::make_private(opts.get_filename()).map_err(sqlx::Error::Io)?;
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts.clone())
            .await?;
        let applied: std::collections::BTreeSet<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
                .fetch_all(&write)
                .await
                .unwrap_or_default()
                .into_iter()
                .collect();
        // A load into a database created empty (no migration applied yet) creates its schema.
        let migrate = migrate || (mode == OpenMode::CreateMissing && applied.is_empty());
        let missing = schema::pending(&applied, &MIGRATOR, migrate)?;
        if migrate {
            schema::log_pending("sqlite", &missing, &applied);
            MIGRATOR.run(&write).await?;
        }
        let writer = writer::Writer::open(opts.get_filename())?;
        let readers = reader::Readers::open(opts.get_filename())?;
        let reading = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts.clone())
            .await?;
        let historico = SqlitePoolOptions::new()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts)
            .await?;
        Ok(SqliteStore {
            write,
            reading,
            historico,
            writer,
            readers,
            _temporary: temporary,
        })
    }

    async fn begin_immediate(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.write.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Writes a consistent copy of the database into `destino` with `VACUUM INTO` (one read
    /// transaction: writers go on meanwhile, and the copy is compact). `destino` must not exist
    /// or be empty; it is created with mode `0600` (the copy holds CPFs, e-mails and key
    /// hashes) before SQLite writes into it.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the file cannot be created (it exists and is not empty) or
    /// the copy fails.
    pub async fn backup_into(&self, destination: &std::path::Path) -> Result<(), StoreError> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(destination).map_err(sqlx::Error::Io)?;
        let target = destination.to_string_lossy().into_owned();
        let r = sqlx::query("VACUUM INTO ?")
            .bind(&target)
            .execute(&self.reading)
            .await;
        if r.is_err() {
            let _ = std::fs::remove_file(destination);
        }
        r?;
        Ok(())
    }

    /// Closes the pools.
    pub async fn close(&self) {
        self.write.close().await;
        self.reading.close().await;
        self.historico.close().await;
    }

    /// `EXPLAIN QUERY PLAN` lines of the history statements for `f` (tests: each filter
    /// combination is served by its index).
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn historico_plan(
        &self,
        conta: ContaId,
        f: &HistoricoFilter,
    ) -> Result<Vec<String>, StoreError> {
        historico::historico_plan(self, conta, f).await
    }

    /// `EXPLAIN QUERY PLAN` lines of the usage statements since `desde`.
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn uso_plan(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        historico::uso_plan(self, conta, since).await
    }
}
