//! The SQLite file of the archive: the chained entries, their purgeable contents, the
//! documents each content holds and the links between account fingerprints. SQLite's SQL only
//! here (PostgreSQL's: `postgres.rs`).

use std::path::Path;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::chain::{GENESIS, instant, parse_instant, seal, walk};
use super::{ArchiveError, Entry, Head, NewEntry, Verification};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
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
CREATE TABLE IF NOT EXISTS contents (
    seq INTEGER PRIMARY KEY,
    chave TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS contents_chave ON contents (chave, seq);
CREATE TABLE IF NOT EXISTS documents (
    documento TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (documento, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS accounts (
    fingerprint TEXT PRIMARY KEY,
    account TEXT NOT NULL
) WITHOUT ROWID;
";

const COLUMNS: &str = "e.seq, e.operation, e.preco, e.data_consulta, e.bought_at, e.account, \
     e.purpose, e.legal_basis, e.content_hash, e.prev_hash, e.hash, e.purged_at, c.chave";

pub(crate) fn open(path: &Path) -> Result<Connection, ArchiveError> {
    let conn = Connection::open(path).map_err(ArchiveError::sqlite("abrir o acervo"))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(ArchiveError::sqlite("abrir o acervo"))?;
    // secure_delete: a purged body's pages are overwritten with zeros, not left in the file.
    // synchronous = NORMAL under WAL: a crash of the program or of the process never loses a
    // committed entry nor breaks the chain; only a power cut can lose the last few commits
    // (whose answers would then be bought again), and an append no longer waits for an fsync
    // of its own (about 0.3 ms each, which made a batch of bought lookups almost 3 times slower).
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;",
    )
    .map_err(ArchiveError::sqlite("abrir o acervo"))?;
    conn.execute_batch(SCHEMA)
        .map_err(ArchiveError::sqlite("criar as tabelas do acervo"))?;
    Ok(conn)
}

/// Caps the file at about `bytes` (SQLite's `max_page_count`): an append past it fails as a
/// full disk would.
pub(crate) fn limit(conn: &Connection, bytes: u64) -> Result<(), ArchiveError> {
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(ArchiveError::sqlite("limitar o acervo"))?;
    let pages = (bytes / u64::try_from(page.max(512)).unwrap_or(4096)).max(1);
    conn.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
        .map_err(ArchiveError::sqlite("limitar o acervo"))
}

fn entry_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entry> {
    let preco: Option<String> = r.get(2)?;
    Ok(Entry {
        seq: r.get::<_, i64>(0)?.unsigned_abs(),
        operation: r.get(1)?,
        preco: preco.and_then(|p| p.parse().ok()),
        data_consulta: r.get(3)?,
        bought_at: parse_instant(&r.get::<_, String>(4)?),
        account: r.get(5)?,
        purpose: r.get(6)?,
        legal_basis: r.get(7)?,
        content_hash: r.get(8)?,
        prev_hash: r.get(9)?,
        hash: r.get(10)?,
        purged_at: r.get::<_, Option<String>>(11)?.map(|s| parse_instant(&s)),
        chave: r.get(12)?,
    })
}

/// Appends `group` at the end of the chain, in order, in one immediate transaction (appends
/// from several processes on one file are serialised by SQLite's write lock).
pub(crate) fn append_group(
    conn: &mut Connection,
    group: &[&NewEntry],
) -> Result<Vec<Entry>, ArchiveError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(ArchiveError::sqlite("gravar no acervo"))?;
    let last: Option<(i64, String)> = tx
        .prepare_cached("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1")
        .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(ArchiveError::sqlite("gravar no acervo"))?;
    let (mut seq, mut prev) = last.map_or((0, GENESIS.to_owned()), |(s, h)| (s, h));
    let mut sealed = Vec::with_capacity(group.len());
    for new in group {
        seq += 1;
        let entry = insert(&tx, new, seq, std::mem::take(&mut prev))
            .map_err(ArchiveError::sqlite("gravar no acervo"))?;
        prev.clone_from(&entry.hash);
        sealed.push(entry);
    }
    tx.commit()
        .map_err(ArchiveError::sqlite("gravar no acervo"))?;
    Ok(sealed)
}

/// Seals `new` as entry `seq` after the hash `prev` and inserts its rows.
fn insert(
    tx: &rusqlite::Transaction<'_>,
    new: &NewEntry,
    seq: i64,
    prev: String,
) -> rusqlite::Result<Entry> {
    let bought_at = instant(new.bought_at);
    let entry = seal(new, seq, prev, &bought_at);
    tx.prepare_cached(
        "INSERT INTO entries (seq, operation, preco, data_consulta, bought_at, account, \
         purpose, legal_basis, content_hash, prev_hash, hash) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        seq,
        entry.operation,
        entry.preco.map(|p| p.to_string()),
        entry.data_consulta,
        bought_at,
        entry.account,
        entry.purpose,
        entry.legal_basis,
        entry.content_hash,
        entry.prev_hash,
        entry.hash
    ])?;
    tx.prepare_cached("INSERT INTO contents (seq, chave, body) VALUES (?1, ?2, ?3)")?
        .execute(params![seq, new.chave, new.body])?;
    let mut doc =
        tx.prepare_cached("INSERT OR IGNORE INTO documents (documento, seq) VALUES (?1, ?2)")?;
    for d in &new.documentos {
        doc.execute(params![d, seq])?;
    }
    Ok(entry)
}

/// The newest kept answer of `operation` for `chave`: its entry and body.
pub(crate) fn latest(
    conn: &Connection,
    operation: &str,
    chave: &str,
) -> Result<Option<(Entry, Vec<u8>)>, ArchiveError> {
    // Built once: a lookup's hot path only finds it in the statement cache.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS}, c.body FROM contents c JOIN entries e ON e.seq = c.seq \
             WHERE c.chave = ?1 AND e.operation = ?2 ORDER BY c.seq DESC LIMIT 1"
        )
    });
    conn.prepare_cached(&SQL)
        .and_then(|mut st| {
            st.query_row(params![chave, operation], |r| {
                Ok((entry_of(r)?, r.get(13)?))
            })
            .optional()
        })
        .map_err(ArchiveError::sqlite("ler o acervo"))
}

/// Entries matching `filter` (SQL after `WHERE`, `?1` bound to `arg`), oldest first.
pub(crate) fn select(
    conn: &Connection,
    filter: &str,
    arg: Option<&str>,
) -> Result<Vec<Entry>, ArchiveError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM entries e LEFT JOIN contents c ON c.seq = e.seq WHERE {filter} \
         ORDER BY e.seq"
    );
    let run = || -> rusqlite::Result<Vec<Entry>> {
        let mut st = conn.prepare(&sql)?;
        match arg {
            Some(a) => st.query_map([a], entry_of)?.collect(),
            None => st.query_map([], entry_of)?.collect(),
        }
    };
    run().map_err(ArchiveError::sqlite("ler o acervo"))
}

/// The filter of the entries that hold `documento` (bare): in their documents or as their key.
pub(crate) const HOLDING: &str = "e.seq IN (SELECT seq FROM documents WHERE documento = ?1 \
     UNION SELECT seq FROM contents WHERE chave = ?1)";

pub(crate) fn body(conn: &Connection, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
    conn.query_row(
        "SELECT body FROM contents WHERE seq = ?1",
        [i64::try_from(seq).unwrap_or(i64::MAX)],
        |r| r.get(0),
    )
    .optional()
    .map_err(ArchiveError::sqlite("ler o acervo"))
}

/// Removes the contents (key, body, documents) of the entries matching `filter`, keeping the
/// entries (their record and hashes): the chain stays verifiable. Returns how many entries.
pub(crate) fn purge(
    conn: &mut Connection,
    filter: &str,
    arg: &str,
    now: DateTime<Utc>,
) -> Result<usize, ArchiveError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(ArchiveError::sqlite("expurgar"))?;
    let run = || -> rusqlite::Result<usize> {
        tx.execute_batch("CREATE TEMP TABLE IF NOT EXISTS purge_seqs (seq INTEGER PRIMARY KEY); DELETE FROM purge_seqs;")?;
        let n = tx.execute(
            &format!(
                "INSERT INTO purge_seqs SELECT e.seq FROM entries e WHERE e.purged_at IS NULL AND ({filter})"
            ),
            [arg],
        )?;
        tx.execute(
            "DELETE FROM contents WHERE seq IN (SELECT seq FROM purge_seqs)",
            [],
        )?;
        tx.execute(
            "DELETE FROM documents WHERE seq IN (SELECT seq FROM purge_seqs)",
            [],
        )?;
        tx.execute(
            "UPDATE entries SET purged_at = ?1 WHERE seq IN (SELECT seq FROM purge_seqs)",
            [instant(now)],
        )?;
        Ok(n)
    };
    let n = run().map_err(ArchiveError::sqlite("expurgar"))?;
    tx.commit().map_err(ArchiveError::sqlite("expurgar"))?;
    // The removed bodies leave the write-ahead log and the file (zeroed by secure_delete).
    let checkpoint =
        |c: &Connection| c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    checkpoint(conn)
        .and_then(|()| conn.execute_batch("VACUUM"))
        .and_then(|()| checkpoint(conn))
        .map_err(ArchiveError::sqlite("expurgar"))?;
    Ok(n)
}

/// Walks the whole chain (see [`walk`]).
pub(crate) fn verify(conn: &Connection, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
    let all = select(conn, "1 = 1", None)?;
    walk(&all, |seq| body(conn, seq), kept)
}

/// The filter of the entries bought by any fingerprint linked to `?1`'s account.
pub(crate) const OF_ACCOUNT: &str = "e.account IN (SELECT fingerprint FROM accounts WHERE \
     account = (SELECT COALESCE((SELECT account FROM accounts WHERE fingerprint = ?1), ?1)) \
     UNION SELECT COALESCE((SELECT account FROM accounts WHERE fingerprint = ?1), ?1))";

/// Links fingerprint `new` to `old`'s account (and everything linked to `new` with it).
pub(crate) fn link(conn: &mut Connection, old: &str, new: &str) -> Result<(), ArchiveError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(ArchiveError::sqlite("vincular contas"))?;
    let run = || -> rusqlite::Result<()> {
        let canon = |fp: &str| -> rusqlite::Result<String> {
            Ok(tx
                .query_row(
                    "SELECT account FROM accounts WHERE fingerprint = ?1",
                    [fp],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or_else(|| fp.to_owned()))
        };
        let (target, moved) = (canon(old)?, canon(new)?);
        tx.execute(
            "INSERT OR IGNORE INTO accounts (fingerprint, account) VALUES (?1, ?1)",
            [&target],
        )?;
        tx.execute(
            "UPDATE accounts SET account = ?1 WHERE account = ?2",
            [&target, &moved],
        )?;
        tx.execute(
            "INSERT OR REPLACE INTO accounts (fingerprint, account) VALUES (?1, ?2)",
            [new, &target],
        )?;
        Ok(())
    };
    run().map_err(ArchiveError::sqlite("vincular contas"))?;
    tx.commit().map_err(ArchiveError::sqlite("vincular contas"))
}

/// The fingerprints linked to `fingerprint`'s account (itself included), sorted.
pub(crate) fn linked(conn: &Connection, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut st = conn.prepare(
            "SELECT fingerprint FROM accounts WHERE account = \
             (SELECT COALESCE((SELECT account FROM accounts WHERE fingerprint = ?1), ?1)) \
             UNION SELECT ?1 ORDER BY 1",
        )?;
        st.query_map([fingerprint], |r| r.get(0))?.collect()
    };
    run().map_err(ArchiveError::sqlite("ler o acervo"))
}
