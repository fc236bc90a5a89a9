//! The team archive in a PostgreSQL database (feature `archive-postgres`): the same tables as
//! the SQLite file, prefixed `archive_`, in the connection's schema. PostgreSQL's SQL only here
//! and in `claim.rs`.
//!
//! Its connections (sqlx) live on a runtime of their own, on one thread: a lookup's read,
//! claim and append run there and are awaited (no thread of the caller's runtime, nor of its
//! blocking pool, waits on the network); the audit tools block their caller until done.
//!
//! Two transaction-scoped advisory locks (`pg_advisory_xact_lock`, released by the commit or
//! the rollback that ends their transaction, or when the connection dies with its process):
//! the chain's, taken by every append, so the chain stays one line across processes; and one
//! per looked-up key, held by a claim for the length of a purchase, so that two processes
//! looking up the same key at once buy it once.

mod claim;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{Executor as _, Row};
use tokio::sync::oneshot;

use super::chain::{GENESIS, instant, parse_instant, seal, walk};
use super::fork::ThisProcess;
use super::store::{BoxFuture, Claim, Columns, ENTRY_COLUMNS, Filter, Store, entry_of};
use super::{
    ArchiveError, ArchiveErrorKind, ArchiveOptions, Entry, Head, Kept, NewEntry, Verification,
};
use crate::EndpointConsulta;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS archive_entries (
    seq BIGINT PRIMARY KEY,
    operation TEXT NOT NULL,
    preco TEXT,
    data_consulta TEXT,
    bought_at TEXT NOT NULL,
    account TEXT NOT NULL,
    purpose TEXT NOT NULL,
    legal_basis TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    purged_at TEXT
);
CREATE TABLE IF NOT EXISTS archive_contents (
    seq BIGINT PRIMARY KEY,
    chave TEXT NOT NULL,
    body BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS archive_contents_chave ON archive_contents (chave, seq);
CREATE TABLE IF NOT EXISTS archive_documents (
    documento TEXT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (documento, seq)
);
CREATE TABLE IF NOT EXISTS archive_accounts (
    fingerprint TEXT PRIMARY KEY,
    account TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS archive_purged_documents (
    tag TEXT NOT NULL,
    purged_at TEXT NOT NULL,
    PRIMARY KEY (tag, purged_at)
);
CREATE TABLE IF NOT EXISTS archive_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
";

/// The schema's version (`archive_meta`'s `schema`), as the SQLite file's `user_version`: 2
/// added the purged documents' tags.
const VERSION: i64 = 2;

/// The advisory lock of the chain (and of the schema's creation): appends wait for it.
const CHAIN_LOCK: i64 = 0x6361_7261_7069_0001;

/// An [`ArchiveError`] of a failed `what`, classified (pool time-out, unreachable, full).
pub(crate) fn fail(what: &'static str) -> impl Fn(sqlx::Error) -> ArchiveError {
    move |e| {
        let kind = match &e {
            sqlx::Error::PoolTimedOut => ArchiveErrorKind::PoolTimeout,
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
            | sqlx::Error::Protocol(_) => ArchiveErrorKind::Unavailable,
            sqlx::Error::Database(d) if d.code().as_deref() == Some("53100") => {
                ArchiveErrorKind::Full
            }
            _ => ArchiveErrorKind::Other,
        };
        ArchiveError::new(kind, what, e)
    }
}

/// SQL after `WHERE` (`$1` bound to the argument, as text) and the argument.
fn condition(filter: Filter<'_>) -> (&'static str, Option<String>) {
    match filter {
        Filter::All => ("TRUE", None),
        Filter::Last => ("e.seq = (SELECT MAX(seq) FROM archive_entries)", None),
        Filter::Seq(s) => ("e.seq = CAST($1 AS BIGINT)", Some(s.to_string())),
        Filter::Holding(d) => (
            "e.seq IN (SELECT seq FROM archive_documents WHERE documento = $1 \
             UNION SELECT seq FROM archive_contents WHERE chave = $1)",
            Some(d.to_owned()),
        ),
        Filter::Conta(f) => (
            "e.account IN (SELECT fingerprint FROM archive_accounts WHERE account = \
             COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1) \
             UNION SELECT COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1))",
            Some(f.to_owned()),
        ),
        Filter::Before(t) => ("e.bought_at < $1", Some(t.to_owned())),
    }
}

/// A PostgreSQL archive: its pool on its own runtime thread.
pub(crate) struct Pg {
    worker: Arc<ThisProcess<Worker>>,
    redacted: PathBuf,
}

pub(crate) struct Worker {
    handle: tokio::runtime::Handle,
    pool: PgPool,
    /// Dropped with the archive: the runtime thread then ends.
    _stop: oneshot::Sender<()>,
}

impl Pg {
    /// Starts the runtime thread, connects and creates the tables.
    pub(crate) fn connect(url: &str, options: &ArchiveOptions) -> Result<Pg, ArchiveError> {
        let opts =
            PgConnectOptions::from_str(url.trim()).map_err(fail("ler o endereço do acervo"))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ArchiveError::io("iniciar o acervo PostgreSQL"))?;
        let handle = rt.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("carapi-acervo-pg".into())
            .spawn(move || {
                rt.block_on(async {
                    let _ = stopped.await;
                });
            })
            .map_err(ArchiveError::io("iniciar o acervo PostgreSQL"))?;
        let pool_options = PgPoolOptions::new()
            .max_connections(options.max_connections_value())
            .acquire_timeout(options.acquire_timeout_value());
        let (pool, found) = on(&handle, async move {
            let pool = pool_options.connect_with(opts).await?;
            let mut tx = pool.begin().await?;
            lock(&mut tx, CHAIN_LOCK).await?;
            tx.execute(SCHEMA).await?;
            let found: Option<String> =
                sqlx::query_scalar("SELECT value FROM archive_meta WHERE name = 'schema'")
                    .fetch_optional(&mut *tx)
                    .await?;
            let found = found.and_then(|v| v.parse::<i64>().ok()).unwrap_or(1);
            if found <= VERSION {
                sqlx::query(
                    "INSERT INTO archive_meta (name, value) VALUES ('schema', $1) \
                     ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                )
                .bind(VERSION.to_string())
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok((pool, found))
        })
        .map_err(fail("abrir o acervo PostgreSQL"))?;
        if found > VERSION {
            return Err(ArchiveError::newer_schema(found, VERSION));
        }
        Ok(Pg {
            worker: Arc::new(ThisProcess::new(Worker {
                handle,
                pool,
                _stop: stop,
            })),
            redacted: PathBuf::from(redact(url)),
        })
    }

    /// Runs `f` with the pool on the archive's runtime and waits for it (blocking the caller).
    fn run<T, F>(&self, what: &'static str, f: impl FnOnce(PgPool) -> F) -> Result<T, ArchiveError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, sqlx::Error>> + Send + 'static,
    {
        on(&self.worker.handle, f(self.worker.pool.clone())).map_err(fail(what))
    }

    /// Runs `f` with the pool on the archive's runtime; the caller awaits it.
    fn spawn<T, F>(
        &self,
        what: &'static str,
        f: impl FnOnce(PgPool) -> F,
    ) -> BoxFuture<Result<T, ArchiveError>>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, sqlx::Error>> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let fut = f(self.worker.pool.clone());
        self.worker.handle.spawn(async move {
            let _ = reply.send(fut.await);
        });
        Box::pin(async move {
            answer
                .await
                .unwrap_or(Err(sqlx::Error::PoolClosed))
                .map_err(fail(what))
        })
    }
}

impl Store for Pg {
    fn location(&self) -> &Path {
        &self.redacted
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn latest(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>> {
        let chave = chave.to_owned();
        self.spawn("ler o acervo", move |pool| async move {
            let mut conn = pool.acquire().await?;
            latest_on(&mut conn, consulta, &chave).await
        })
    }

    fn claim(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Box<dyn Claim>, ArchiveError>> {
        claim::start(Arc::clone(&self.worker), consulta, chave)
    }

    fn append(&self, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>> {
        self.spawn("gravar no acervo", move |pool| async move {
            let new = new.with_documents();
            let mut tx = pool.begin().await?;
            let e = append_on(&mut tx, &new).await?;
            tx.commit().await?;
            Ok(e)
        })
    }

    fn purged_at(&self, tag: &str) -> BoxFuture<Result<Option<DateTime<Utc>>, ArchiveError>> {
        let tag = tag.to_owned();
        self.spawn("ler os expurgos", move |pool| async move {
            let last: Option<String> = sqlx::query_scalar(
                "SELECT MAX(purged_at) FROM archive_purged_documents WHERE tag = $1",
            )
            .bind(tag)
            .fetch_one(&pool)
            .await?;
            Ok(last.map(|t| parse_instant(&t)))
        })
    }

    fn select(&self, filter: Filter<'_>) -> Result<Vec<Entry>, ArchiveError> {
        let (condition, arg) = condition(filter);
        let rows = self.run("ler o acervo", move |pool| async move {
            let sql = format!(
                "SELECT {ENTRY_COLUMNS} FROM archive_entries e LEFT JOIN archive_contents c \
                 ON c.seq = e.seq WHERE {condition} ORDER BY e.seq"
            );
            let rows = match arg {
                Some(a) => sqlx::query(&sql).bind(a).fetch_all(&pool).await?,
                None => sqlx::query(&sql).fetch_all(&pool).await?,
            };
            rows.iter().map(entry_of).collect::<sqlx::Result<Vec<_>>>()
        })?;
        rows.into_iter().collect()
    }

    fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        self.run("ler o acervo", move |pool| async move {
            sqlx::query_scalar("SELECT body FROM archive_contents WHERE seq = $1")
                .bind(seq)
                .fetch_optional(&pool)
                .await
        })
    }

    fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
        let all = self.select(Filter::All)?;
        let mut bodies: HashMap<u64, Vec<u8>> = self.run("ler o acervo", |pool| async move {
            let rows: Vec<(i64, Vec<u8>)> =
                sqlx::query_as("SELECT seq, body FROM archive_contents")
                    .fetch_all(&pool)
                    .await?;
            Ok(rows
                .into_iter()
                .map(|(s, b)| (s.unsigned_abs(), b))
                .collect())
        })?;
        walk(&all, |seq| Ok(bodies.remove(&seq)), kept)
    }

    fn purge(
        &self,
        filter: Filter<'_>,
        tag: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<usize, ArchiveError> {
        let (condition, arg) = condition(filter);
        let (now, tag) = (instant(now), tag.map(str::to_owned));
        self.run("expurgar", move |pool| async move {
            let mut tx = pool.begin().await?;
            lock(&mut tx, CHAIN_LOCK).await?;
            let sql = format!(
                "SELECT e.seq FROM archive_entries e WHERE e.purged_at IS NULL AND ({condition})"
            );
            let seqs: Vec<i64> = match arg {
                Some(a) => sqlx::query_scalar(&sql).bind(a).fetch_all(&mut *tx).await?,
                None => sqlx::query_scalar(&sql).fetch_all(&mut *tx).await?,
            };
            for table in ["archive_contents", "archive_documents"] {
                sqlx::query(&format!("DELETE FROM {table} WHERE seq = ANY($1)"))
                    .bind(&seqs)
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query("UPDATE archive_entries SET purged_at = $1 WHERE seq = ANY($2)")
                .bind(&now)
                .bind(&seqs)
                .execute(&mut *tx)
                .await?;
            if let Some(tag) = tag {
                sqlx::query(
                    "INSERT INTO archive_purged_documents (tag, purged_at) VALUES ($1, $2) \
                     ON CONFLICT DO NOTHING",
                )
                .bind(tag)
                .bind(&now)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(seqs.len())
        })
    }

    fn purges(&self, tag: &str) -> Result<Vec<DateTime<Utc>>, ArchiveError> {
        let tag = tag.to_owned();
        let all: Vec<String> = self.run("ler os expurgos", move |pool| async move {
            sqlx::query_scalar(
                "SELECT purged_at FROM archive_purged_documents WHERE tag = $1 ORDER BY purged_at",
            )
            .bind(tag)
            .fetch_all(&pool)
            .await
        })?;
        Ok(all.iter().map(|t| parse_instant(t)).collect())
    }

    fn has_purges(&self) -> BoxFuture<Result<bool, ArchiveError>> {
        self.spawn("ler os expurgos", |pool| async move {
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM archive_purged_documents)")
                .fetch_one(&pool)
                .await
        })
    }

    fn link(&self, old: &str, new: &str) -> Result<(), ArchiveError> {
        let (old, new) = (old.to_owned(), new.to_owned());
        self.run("vincular contas", move |pool| async move {
            let mut tx = pool.begin().await?;
            lock(&mut tx, CHAIN_LOCK).await?;
            let canon = "SELECT COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1)";
            let target: String = sqlx::query_scalar(canon).bind(&old).fetch_one(&mut *tx).await?;
            let moved: String = sqlx::query_scalar(canon).bind(&new).fetch_one(&mut *tx).await?;
            sqlx::query(
                "INSERT INTO archive_accounts (fingerprint, account) VALUES ($1, $1) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(&target)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE archive_accounts SET account = $1 WHERE account = $2")
                .bind(&target)
                .bind(&moved)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "INSERT INTO archive_accounts (fingerprint, account) VALUES ($1, $2) \
                 ON CONFLICT (fingerprint) DO UPDATE SET account = EXCLUDED.account",
            )
            .bind(&new)
            .bind(&target)
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        })
    }

    fn linked(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
        let fingerprint = fingerprint.to_owned();
        self.run("ler o acervo", move |pool| async move {
            sqlx::query_scalar(
                "SELECT fingerprint FROM archive_accounts WHERE account = \
                 COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1) \
                 UNION SELECT $1 ORDER BY 1",
            )
            .bind(fingerprint)
            .fetch_all(&pool)
            .await
        })
    }

    fn limit_size(&self, _bytes: u64) -> Result<(), ArchiveError> {
        Err(ArchiveError::plain(
            "limitar o tamanho de um acervo PostgreSQL",
        ))
    }
}

impl Columns for PgRow {
    type Error = sqlx::Error;
    fn text(&self, i: usize) -> sqlx::Result<String> {
        self.try_get(i)
    }
    fn optional_text(&self, i: usize) -> sqlx::Result<Option<String>> {
        self.try_get(i)
    }
    fn integer(&self, i: usize) -> sqlx::Result<i64> {
        self.try_get(i)
    }
}

/// `pg_advisory_xact_lock(key)`: held until the transaction ends.
async fn lock(conn: &mut PgConnection, key: i64) -> sqlx::Result<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(key)
        .execute(conn)
        .await
        .map(|_| ())
}

/// The newest kept answer of a key: its entry and body (a stored value the archive does not
/// write reads as a decode error).
async fn latest_on(
    conn: &mut PgConnection,
    consulta: EndpointConsulta,
    chave: &str,
) -> sqlx::Result<Kept> {
    let row = sqlx::query(&format!(
        "SELECT {ENTRY_COLUMNS}, c.body FROM archive_contents c JOIN archive_entries e \
         ON e.seq = c.seq WHERE c.chave = $1 AND e.operation = $2 ORDER BY c.seq DESC LIMIT 1"
    ))
    .bind(chave)
    .bind(consulta.name())
    .fetch_optional(conn)
    .await?;
    let Some(r) = row else {
        return Ok(None);
    };
    let entry = entry_of(&r)?.map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(Some((entry, r.try_get(13)?)))
}

/// Appends `new` at the end of the chain, under the chain's lock, in the caller's transaction.
async fn append_on(conn: &mut PgConnection, new: &NewEntry) -> sqlx::Result<Entry> {
    lock(conn, CHAIN_LOCK).await?;
    let last: Option<(i64, String)> =
        sqlx::query_as("SELECT seq, hash FROM archive_entries ORDER BY seq DESC LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?;
    let (seq, prev) = last.map_or((1, GENESIS.to_owned()), |(s, h)| (s + 1, h));
    let bought_at = instant(new.bought_at);
    let e = seal(new, seq, prev, &bought_at);
    sqlx::query(
        "INSERT INTO archive_entries (seq, operation, preco, data_consulta, bought_at, account, \
         purpose, legal_basis, content_hash, prev_hash, hash) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(seq)
    .bind(e.consulta.name())
    .bind(e.preco.map(|p| p.to_string()))
    .bind(&e.data_consulta)
    .bind(&bought_at)
    .bind(&e.conta)
    .bind(&e.purpose)
    .bind(&e.legal_basis)
    .bind(&e.content_hash)
    .bind(&e.prev_hash)
    .bind(&e.hash)
    .execute(&mut *conn)
    .await?;
    sqlx::query("INSERT INTO archive_contents (seq, chave, body) VALUES ($1, $2, $3)")
        .bind(seq)
        .bind(&new.chave)
        .bind(&new.body)
        .execute(&mut *conn)
        .await?;
    for d in &new.documentos {
        sqlx::query(
            "INSERT INTO archive_documents (documento, seq) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(d)
        .bind(seq)
        .execute(&mut *conn)
        .await?;
    }
    Ok(e)
}

/// Runs `fut` on the archive's runtime and blocks until it ends.
fn on<T: Send + 'static>(
    handle: &tokio::runtime::Handle,
    fut: impl Future<Output = sqlx::Result<T>> + Send + 'static,
) -> sqlx::Result<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().unwrap_or(Err(sqlx::Error::PoolClosed))
}

/// `url` without its password (for [`super::Archive::path`] and messages).
fn redact(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(None);
            }
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "postgres://".to_owned(),
    }
}
