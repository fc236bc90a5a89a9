//! The team archive in a PostgreSQL database (feature `archive-postgres`): the same tables as
//! the SQLite file, prefixed `archive_`, in the connection's schema. PostgreSQL's SQL only here.
//!
//! Its connections (sqlx) live on a runtime of their own, on one thread: the archive's methods
//! are synchronous, like the SQLite file's, whatever runtime (or none) the caller runs on.
//!
//! Two transaction-scoped advisory locks (`pg_advisory_xact_lock`, released by the commit or
//! the rollback that ends their transaction, or when the connection dies with its process):
//! the chain's, taken by every append, so the chain stays one line across processes; and one
//! per looked-up key, held by a [`Claim`] for the length of a purchase, so that two processes
//! looking up the same key at once buy it once.

use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{Executor as _, Row};
use tokio::sync::{mpsc, oneshot};

use super::chain::{GENESIS, instant, parse_instant, seal, walk};
use super::{ArchiveError, Entry, Head, NewEntry, Verification};

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
";

const COLUMNS: &str = "e.seq, e.operation, e.preco, e.data_consulta, e.bought_at, e.account, \
     e.purpose, e.legal_basis, e.content_hash, e.prev_hash, e.hash, e.purged_at, c.chave";

/// The advisory lock of the chain (and of the schema's creation): appends wait for it.
const CHAIN_LOCK: i64 = 0x6361_7261_7069_0001;

/// At most this many connections: each purchase in flight holds one for its length.
const MAX_CONNECTIONS: u32 = 16;

/// An [`ArchiveError`] of a failed `what`.
fn fail(what: &'static str) -> impl Fn(sqlx::Error) -> ArchiveError {
    move |e| ArchiveError {
        what,
        source: Some(Box::new(e)),
    }
}

/// True when PostgreSQL ran out of disk (SQLSTATE 53100 `disk_full`).
pub(crate) fn is_full(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.code().as_deref() == Some("53100"))
}

/// Which entries a read or a purge concerns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Filter<'a> {
    /// Every entry.
    All,
    /// The newest entry.
    Last,
    /// The entry of this sequence number.
    Seq(u64),
    /// The entries holding this bare document (its documents, or its key).
    Holding(&'a str),
    /// The entries of every fingerprint linked to this one's account.
    Account(&'a str),
    /// The entries bought before this instant (the archive's fixed-width form).
    Before(&'a str),
}

impl Filter<'_> {
    /// SQL after `WHERE` (`$1` bound to the argument, as text) and the argument.
    fn sql(self) -> (&'static str, Option<String>) {
        match self {
            Filter::All => ("TRUE", None),
            Filter::Last => ("e.seq = (SELECT MAX(seq) FROM archive_entries)", None),
            Filter::Seq(s) => ("e.seq = CAST($1 AS BIGINT)", Some(s.to_string())),
            Filter::Holding(d) => (
                "e.seq IN (SELECT seq FROM archive_documents WHERE documento = $1 \
                 UNION SELECT seq FROM archive_contents WHERE chave = $1)",
                Some(d.to_owned()),
            ),
            Filter::Account(f) => (
                "e.account IN (SELECT fingerprint FROM archive_accounts WHERE account = \
                 COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1) \
                 UNION SELECT COALESCE((SELECT account FROM archive_accounts WHERE fingerprint = $1), $1))",
                Some(f.to_owned()),
            ),
            Filter::Before(t) => ("e.bought_at < $1", Some(t.to_owned())),
        }
    }
}

/// A PostgreSQL archive: its pool on its own runtime thread. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Pg {
    inner: Arc<Worker>,
}

struct Worker {
    handle: tokio::runtime::Handle,
    pool: PgPool,
    redacted: String,
    /// Dropped with the last clone: the runtime thread then ends.
    _stop: oneshot::Sender<()>,
}

impl Pg {
    /// Starts the runtime thread, connects and creates the tables.
    pub(crate) fn connect(url: &str) -> Result<Pg, ArchiveError> {
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
        let pool = on(&handle, async move {
            let pool = PgPoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .acquire_timeout(Duration::from_secs(30))
                .connect_with(opts)
                .await?;
            let mut tx = pool.begin().await?;
            lock(&mut tx, CHAIN_LOCK).await?;
            tx.execute(SCHEMA).await?;
            tx.commit().await?;
            Ok(pool)
        })
        .map_err(fail("abrir o acervo PostgreSQL"))?;
        Ok(Pg {
            inner: Arc::new(Worker {
                handle,
                pool,
                redacted: redact(url),
                _stop: stop,
            }),
        })
    }

    /// The URL without its password.
    pub(crate) fn redacted(&self) -> &str {
        &self.inner.redacted
    }

    /// Runs `f` with the pool on the archive's runtime and waits for it (blocking the caller).
    fn run<T, F>(&self, what: &'static str, f: impl FnOnce(PgPool) -> F) -> Result<T, ArchiveError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, sqlx::Error>> + Send + 'static,
    {
        on(&self.inner.handle, f(self.inner.pool.clone())).map_err(fail(what))
    }

    pub(crate) fn select(&self, filter: Filter<'_>) -> Result<Vec<Entry>, ArchiveError> {
        let (sql, arg) = filter.sql();
        self.run("ler o acervo", move |pool| async move {
            let sql = format!(
                "SELECT {COLUMNS} FROM archive_entries e LEFT JOIN archive_contents c \
                 ON c.seq = e.seq WHERE {sql} ORDER BY e.seq"
            );
            let rows = match arg {
                Some(a) => sqlx::query(&sql).bind(a).fetch_all(&pool).await?,
                None => sqlx::query(&sql).fetch_all(&pool).await?,
            };
            rows.iter().map(entry_of).collect()
        })
    }

    pub(crate) fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        self.run("ler o acervo", move |pool| async move {
            sqlx::query_scalar("SELECT body FROM archive_contents WHERE seq = $1")
                .bind(seq)
                .fetch_optional(&pool)
                .await
        })
    }

    pub(crate) fn latest(
        &self,
        operation: &str,
        chave: &str,
    ) -> Result<Option<(Entry, Vec<u8>)>, ArchiveError> {
        let (operation, chave) = (operation.to_owned(), chave.to_owned());
        self.run("ler o acervo", move |pool| async move {
            let mut conn = pool.acquire().await?;
            latest_on(&mut conn, &operation, &chave).await
        })
    }

    pub(crate) fn append(&self, new: &NewEntry) -> Result<Entry, ArchiveError> {
        let new = new.clone();
        self.run("gravar no acervo", move |pool| async move {
            let mut tx = pool.begin().await?;
            let e = append_on(&mut tx, &new).await?;
            tx.commit().await?;
            Ok(e)
        })
    }

    pub(crate) fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
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

    /// Removes the contents of the entries `filter` selects, keeping their records.
    pub(crate) fn purge(&self, filter: Filter<'_>) -> Result<usize, ArchiveError> {
        let (sql, arg) = filter.sql();
        let now = instant(chrono::Utc::now());
        self.run("expurgar", move |pool| async move {
            let mut tx = pool.begin().await?;
            lock(&mut tx, CHAIN_LOCK).await?;
            let sql = format!(
                "SELECT e.seq FROM archive_entries e WHERE e.purged_at IS NULL AND ({sql})"
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
                .bind(now)
                .bind(&seqs)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(seqs.len())
        })
    }

    pub(crate) fn link(&self, old: &str, new: &str) -> Result<(), ArchiveError> {
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

    pub(crate) fn linked(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
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

    /// Waits until no other process (nor task) holds `operation` + `chave`, then holds it
    /// until the [`Claim`] is dropped or appends. Cancel-safe: a dropped future, or a dropped
    /// claim, rolls its transaction back, which releases the lock.
    pub(crate) async fn claim(&self, operation: &str, chave: &str) -> Result<Claim, ArchiveError> {
        let key = key_lock(operation, chave);
        let (ready, acquired) = oneshot::channel();
        let (cmds, rx) = mpsc::unbounded_channel();
        let pool = self.inner.pool.clone();
        self.inner.handle.spawn(hold(pool, key, ready, rx));
        acquired
            .await
            .map_err(|_| ArchiveError::plain("reservar a compra no acervo"))?
            .map_err(fail("reservar a compra no acervo"))?;
        Ok(Claim {
            cmds,
            _pg: self.clone(),
        })
    }
}

/// The lock of one looked-up key: the first 8 bytes of a SHA-256.
fn key_lock(operation: &str, chave: &str) -> i64 {
    let d = Sha256::digest(format!("carapi-acervo-compra\n{operation}\n{chave}").as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    i64::from_be_bytes(b)
}

/// The newest kept answer of a key: its entry and body.
type Kept = Option<(Entry, Vec<u8>)>;

enum Cmd {
    Latest(String, String, oneshot::Sender<sqlx::Result<Kept>>),
    Append(Box<NewEntry>, oneshot::Sender<sqlx::Result<Entry>>),
}

/// The task behind a [`Claim`]: a transaction holding the key's lock, serving the claim's
/// reads and its one append (committed), rolled back when the claim goes away.
async fn hold(
    pool: PgPool,
    key: i64,
    ready: oneshot::Sender<sqlx::Result<()>>,
    mut cmds: mpsc::UnboundedReceiver<Cmd>,
) {
    let mut tx = match pool.begin().await {
        Ok(tx) => tx,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if let Err(e) = lock(&mut tx, key).await {
        let _ = ready.send(Err(e));
        let _ = tx.rollback().await;
        return;
    }
    if ready.send(Ok(())).is_err() {
        let _ = tx.rollback().await;
        return;
    }
    while let Some(cmd) = cmds.recv().await {
        match cmd {
            Cmd::Latest(op, chave, reply) => {
                let _ = reply.send(latest_on(&mut tx, &op, &chave).await);
            }
            Cmd::Append(new, reply) => {
                let appended = append_on(&mut tx, &new).await;
                let r = match appended {
                    Ok(e) => tx.commit().await.map(|()| e),
                    Err(e) => {
                        let _ = tx.rollback().await;
                        Err(e)
                    }
                };
                let _ = reply.send(r);
                return;
            }
        }
    }
    let _ = tx.rollback().await;
}

/// A purchase of one key reserved across processes (see [`Pg::claim`]).
pub(crate) struct Claim {
    cmds: mpsc::UnboundedSender<Cmd>,
    _pg: Pg,
}

impl Claim {
    /// The newest kept answer, read under the claim.
    pub(crate) async fn latest(
        &self,
        operation: &str,
        chave: &str,
    ) -> Result<Option<(Entry, Vec<u8>)>, ArchiveError> {
        let (reply, answer) = oneshot::channel();
        let what = "ler o acervo";
        self.cmds
            .send(Cmd::Latest(operation.to_owned(), chave.to_owned(), reply))
            .map_err(|_| ArchiveError::plain(what))?;
        answer
            .await
            .map_err(|_| ArchiveError::plain(what))?
            .map_err(fail(what))
    }

    /// Appends the bought answer and commits, which releases the claim.
    pub(crate) async fn append(self, new: NewEntry) -> Result<Entry, ArchiveError> {
        let (reply, answer) = oneshot::channel();
        let what = "gravar no acervo";
        self.cmds
            .send(Cmd::Append(Box::new(new), reply))
            .map_err(|_| ArchiveError::plain(what))?;
        answer
            .await
            .map_err(|_| ArchiveError::plain(what))?
            .map_err(fail(what))
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

async fn latest_on(
    conn: &mut PgConnection,
    operation: &str,
    chave: &str,
) -> sqlx::Result<Option<(Entry, Vec<u8>)>> {
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS}, c.body FROM archive_contents c JOIN archive_entries e \
         ON e.seq = c.seq WHERE c.chave = $1 AND e.operation = $2 ORDER BY c.seq DESC LIMIT 1"
    ))
    .bind(chave)
    .bind(operation)
    .fetch_optional(conn)
    .await?;
    row.map(|r| Ok((entry_of(&r)?, r.try_get(13)?))).transpose()
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
    .bind(&e.operation)
    .bind(e.preco.map(|p| p.to_string()))
    .bind(&e.data_consulta)
    .bind(&bought_at)
    .bind(&e.account)
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

fn entry_of(r: &PgRow) -> sqlx::Result<Entry> {
    let preco: Option<String> = r.try_get(2)?;
    Ok(Entry {
        seq: r.try_get::<i64, _>(0)?.unsigned_abs(),
        operation: r.try_get(1)?,
        preco: preco.and_then(|p| p.parse().ok()),
        data_consulta: r.try_get(3)?,
        bought_at: parse_instant(&r.try_get::<String, _>(4)?),
        account: r.try_get(5)?,
        purpose: r.try_get(6)?,
        legal_basis: r.try_get(7)?,
        content_hash: r.try_get(8)?,
        prev_hash: r.try_get(9)?,
        hash: r.try_get(10)?,
        purged_at: r
            .try_get::<Option<String>, _>(11)?
            .map(|s| parse_instant(&s)),
        chave: r.try_get(12)?,
    })
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
