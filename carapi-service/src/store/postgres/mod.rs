//! [`Store`] over PostgreSQL (sqlx 0.8): the same semantics as the SQLite store, for several
//! server processes sharing one database.
//!
//! Selected by [`crate::startup::open_store`] for `postgres://` and `postgresql://` URLs.
//! Schema: `migrations/postgres/` (applied on connect; sqlx takes an advisory lock, so
//! processes starting together do not race).
//!
//! Concurrency (all transactions `READ COMMITTED`):
//! - a charge locks its account row (`SELECT ... FOR UPDATE`), then reads the limit counters
//!   and the balance, then debits with a conditional `UPDATE ... WHERE saldo_centavos >= price`
//!   whose row count is checked, writes the history row, the ledger debit and the day's
//!   counters, and commits: all or nothing, never a negative balance (the column also has a
//!   `CHECK (saldo_centavos >= 0)`);
//! - a top-up is confirmed by a conditional `UPDATE ... WHERE status = 'Pendente'` in the same
//!   transaction as its credit: a concurrent confirmation blocks on the row, re-checks the
//!   condition and changes nothing;
//! - creating a top-up locks the account row, so the 10-minute reuse cannot be raced.
//!
//! Types: money `BIGINT` centavos, instants `TIMESTAMPTZ` (microseconds; SQLite keeps
//! milliseconds), Brasília days `DATE`, decimals of CAR records `NUMERIC` (read back as text,
//! so their scale is kept).

mod consultas;
mod contas;
mod coordination;
mod estorno;
mod historico;
mod imoveis;
mod keys;
mod outcome;
mod psp;
mod rate;
mod recargas;
mod retencao;
mod rows;
mod settings;

pub use imoveis::{
    CODIGOS_DO_DOCUMENTO, ITENS_DO_DOCUMENTO, OWNERS_BY_CODIGOS, imoveis_by_codigos,
};
pub use rate::PostgresRateLimiter;

use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::MigrateDatabase;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Postgres};

use chrono::{DateTime, Utc};

use super::*;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Connections of the pool opened by [`PgStore::connect`].
pub(crate) const DEFAULT_CONNECTIONS: u32 = 10;

/// PostgreSQL implementation of [`Store`].
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    /// History and usage reads: their own small pool whose statements time out after
    /// [`HISTORY_TIMEOUT`] (and never plan a sequential scan), so that they never hold the
    /// connections balance reads and charges need.
    historico: PgPool,
}

/// Longest wait for a pooled connection. Past it the request fails at once
/// (`sqlx::Error::PoolTimedOut`, which the HTTP layer answers 503 `SERVICO_INDISPONIVEL` with
/// `Retry-After`) instead of hanging while the database is away; the pool reconnects by itself
/// when it returns.
pub(crate) const CONNECTION_WAIT: Duration = Duration::from_secs(5);

/// Connections of the history pool.
pub(crate) const HISTORY_CONNECTIONS: u32 = 3;
/// Statement time-out of the history pool.
pub(crate) const HISTORY_TIMEOUT: Duration = Duration::from_secs(5);

pub use super::is_postgres_url;

impl PgStore {
    /// Connects to `url` (`postgres://user@host:5432/db`), creating the database when it does
    /// not exist and the user may create it, and applies the migrations. Pool of
    /// `DEFAULT_CONNECTIONS` connections.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the URL is invalid or the server unreachable;
    /// [`StoreError::Migration`] when migrations fail.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, DEFAULT_CONNECTIONS).await
    }

    /// Opens the database of `url` as `mode` says ([`OpenMode`]): [`PgStore::connect`] for
    /// [`OpenMode::Migrate`]; with [`OpenMode::Existing`] no database is created and nothing
    /// migrated.
    ///
    /// # Errors
    /// As [`PgStore::connect`]; [`StoreError::Schema`] for a schema that is not this binary's
    /// where it may not be migrated.
    pub async fn open(url: &str, mode: OpenMode) -> Result<Self, StoreError> {
        Self::open_with(url, DEFAULT_CONNECTIONS, mode).await
    }

    /// [`PgStore::connect`] with a pool of `conexoes` connections (at least 1).
    ///
    /// # Errors
    /// As [`PgStore::connect`].
    pub(crate) async fn connect_with(url: &str, connections: u32) -> Result<Self, StoreError> {
        Self::open_with(url, connections, OpenMode::Migrate).await
    }

    async fn open_with(url: &str, connections: u32, mode: OpenMode) -> Result<Self, StoreError> {
        let opts = PgConnectOptions::from_str(url)?;
        let exists =
            mode == OpenMode::Existing || Postgres::database_exists(url).await.unwrap_or(true);
        let migrate = match mode {
            OpenMode::Migrate => true,
            OpenMode::CreateMissing => !exists,
            OpenMode::Existing => false,
        };
        // Best effort, like SQLite's create_if_missing: a user without CREATEDB, or another
        // process creating it at the same time, still gets a meaningful error from connect.
        if migrate
            && !exists
            && let Err(e) = Postgres::create_database(url).await
        {
            tracing::debug!(erro = %e, "CREATE DATABASE falhou; tentando conectar assim mesmo");
        }
        let pool = PgPoolOptions::new()
            .max_connections(connections.max(1))
            .acquire_timeout(CONNECTION_WAIT)
            .connect_with(opts.clone())
            .await?;
        let applied: std::collections::BTreeSet<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
                .fetch_all(&pool)
                .await
                .unwrap_or_default()
                .into_iter()
                .collect();
        // A load into a database created empty (no migration applied yet) creates its schema.
        let migrate = migrate || (mode == OpenMode::CreateMissing && applied.is_empty());
        let missing = super::schema::pending(&applied, &MIGRATOR, migrate)?;
        if migrate {
            super::schema::log_pending("postgres", &missing, &applied);
            MIGRATOR.run(&pool).await?;
        }
        let time = format!("{}ms", HISTORY_TIMEOUT.as_millis());
        let historico = PgPoolOptions::new()
            .max_connections(HISTORY_CONNECTIONS)
            .acquire_timeout(CONNECTION_WAIT)
            .connect_lazy_with(opts.options([
                ("statement_timeout", time.as_str()),
                // every history and usage statement is served by an index (migrations
                // 0011-0012): never let small-table statistics pick a scan of the history
                ("enable_seqscan", "off"),
            ]));
        Ok(PgStore { pool, historico })
    }

    /// `EXPLAIN` lines of the history statements for `f` (tests: each filter combination is
    /// served by an index).
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn historico_plan(
        &self,
        conta: ContaId,
        f: &HistoricoFilter,
    ) -> Result<Vec<String>, StoreError> {
        historico::historico_plan(&self.historico, conta, f).await
    }

    /// `EXPLAIN` lines of the usage statements since `desde`.
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn uso_plan(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        historico::uso_plan(&self.historico, conta, since).await
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}
