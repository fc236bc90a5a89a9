//! The SQLite file of the archive: the chained entries, their purgeable contents, the
//! documents each content holds, the links between account fingerprints and the tags of
//! purged documents. SQLite's SQL only here (PostgreSQL's: `postgres/`).

use std::path::Path;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::EndpointConsulta;
use crate::archive::chain::{GENESIS, instant, parse_instant, seal, walk};
use crate::archive::store::{Columns, ENTRY_COLUMNS, Filter, entry_of};
use crate::archive::{ArchiveError, Entry, Head, Kept, NewEntry, Verification};

/// The schema's version (`PRAGMA user_version`): 2 added the purged documents' tags.
const VERSION: i64 = 2;

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
CREATE TABLE IF NOT EXISTS purged_documents (
    tag TEXT NOT NULL,
    purged_at TEXT NOT NULL,
    PRIMARY KEY (tag, purged_at)
) WITHOUT ROWID;
";

/// A connection to the archive file at `path` (created and migrated by the first): write-ahead
/// log, a 30 s wait for another process's write lock, purged pages overwritten.
///
/// `create` runs the schema in an immediate transaction; the caller holds the file's open lock
/// (see `locks.rs`) so two processes creating one new file never meet half a schema.
pub(crate) fn open(path: &Path, create: bool) -> Result<Connection, ArchiveError> {
    let fail = ArchiveError::sqlite("abrir o acervo");
    let mut conn = Connection::open(path).map_err(&fail)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(&fail)?;
    // secure_delete: a purged body's pages are overwritten with zeros, not left in the file.
    // synchronous = NORMAL under WAL: a crash of the program or of the process never loses a
    // committed entry nor breaks the chain; only a power cut can lose the last few commits.
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;",
    )
    .map_err(&fail)?;
    if create {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(ArchiveError::sqlite("criar as tabelas do acervo"))?;
        let found: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(ArchiveError::sqlite("ler a versão do acervo"))?;
        if found > VERSION {
            return Err(ArchiveError::newer_schema(found, VERSION));
        }
        tx.execute_batch(SCHEMA)
            .and_then(|()| tx.pragma_update(None, "user_version", VERSION))
            .and_then(|()| tx.commit())
            .map_err(ArchiveError::sqlite("criar as tabelas do acervo"))?;
    }
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

impl Columns for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn optional_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn integer(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
}

/// Appends `group` at the end of the chain, in order, in one immediate transaction (appends
/// from several processes on one file are serialised by SQLite's write lock).
pub(crate) fn append_group(
    conn: &mut Connection,
    group: &[&NewEntry],
) -> Result<Vec<Entry>, ArchiveError> {
    let fail = ArchiveError::sqlite("gravar no acervo");
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&fail)?;
    let last: Option<(i64, String)> = tx
        .prepare_cached("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1")
        .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(&fail)?;
    let (mut seq, mut prev) = last.unwrap_or((0, GENESIS.to_owned()));
    let mut sealed = Vec::with_capacity(group.len());
    for new in group {
        seq += 1;
        let entry = insert(&tx, new, seq, std::mem::take(&mut prev)).map_err(&fail)?;
        prev.clone_from(&entry.hash);
        sealed.push(entry);
    }
    tx.commit().map_err(&fail)?;
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
        entry.consulta.name(),
        entry.preco.map(|p| p.to_string()),
        entry.data_consulta,
        bought_at,
        entry.conta,
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

/// The newest kept answer of `consulta` for `chave`: its entry and body.
pub(crate) fn latest(
    conn: &Connection,
    consulta: EndpointConsulta,
    chave: &str,
) -> Result<Kept, ArchiveError> {
    // Built once: a lookup's path only finds it in the statement cache.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {ENTRY_COLUMNS}, c.body FROM contents c JOIN entries e ON e.seq = c.seq \
             WHERE c.chave = ?1 AND e.operation = ?2 ORDER BY c.seq DESC LIMIT 1"
        )
    });
    let row = conn
        .prepare_cached(&SQL)
        .and_then(|mut st| {
            st.query_row(params![chave, consulta.name()], |r| {
                Ok((entry_of(r)?, r.get::<_, Vec<u8>>(13)?))
            })
            .optional()
        })
        .map_err(ArchiveError::sqlite("ler o acervo"))?;
    row.map(|(e, body)| e.map(|e| (e, body))).transpose()
}

/// SQL after `WHERE` (`?1` bound to the argument) of `filter`, and the argument.
fn condition(filter: Filter<'_>) -> (&'static str, Option<String>) {
    match filter {
        Filter::All => ("1 = 1", None),
        Filter::Last => ("e.seq = (SELECT MAX(seq) FROM entries)", None),
        Filter::Seq(s) => ("e.seq = CAST(?1 AS INTEGER)", Some(s.to_string())),
        Filter::Holding(d) => (
            "e.seq IN (SELECT seq FROM documents WHERE documento = ?1 \
             UNION SELECT seq FROM contents WHERE chave = ?1)",
            Some(d.to_owned()),
        ),
        Filter::Conta(f) => (
            "e.account IN (SELECT fingerprint FROM accounts WHERE \
             account = (SELECT COALESCE((SELECT account FROM accounts WHERE fingerprint = ?1), ?1)) \
             UNION SELECT COALESCE((SELECT account FROM accounts WHERE fingerprint = ?1), ?1))",
            Some(f.to_owned()),
        ),
        Filter::Before(t) => ("e.bought_at < ?1", Some(t.to_owned())),
    }
}

/// Entries matching `filter`, oldest first.
pub(crate) fn select(conn: &Connection, filter: Filter<'_>) -> Result<Vec<Entry>, ArchiveError> {
    let (condition, arg) = condition(filter);
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM entries e LEFT JOIN contents c ON c.seq = e.seq \
         WHERE {condition} ORDER BY e.seq"
    );
    let run = || -> rusqlite::Result<Vec<Result<Entry, ArchiveError>>> {
        let mut st = conn.prepare(&sql)?;
        match arg {
            Some(a) => st.query_map([a], |r| entry_of(r))?.collect(),
            None => st.query_map([], |r| entry_of(r))?.collect(),
        }
    };
    run()
        .map_err(ArchiveError::sqlite("ler o acervo"))?
        .into_iter()
        .collect()
}

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
/// entries (their record and hashes): the chain stays verifiable; with `tag`, the document's
/// purge is recorded in the same transaction. Returns how many entries.
pub(crate) fn purge(
    conn: &mut Connection,
    filter: Filter<'_>,
    tag: Option<&str>,
    now: DateTime<Utc>,
) -> Result<usize, ArchiveError> {
    let (condition, arg) = condition(filter);
    let fail = ArchiveError::sqlite("expurgar");
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&fail)?;
    let now = instant(now);
    let run = || -> rusqlite::Result<usize> {
        tx.execute_batch("CREATE TEMP TABLE IF NOT EXISTS purge_seqs (seq INTEGER PRIMARY KEY); DELETE FROM purge_seqs;")?;
        let sql = format!(
            "INSERT INTO purge_seqs SELECT e.seq FROM entries e WHERE e.purged_at IS NULL AND ({condition})"
        );
        let n = match &arg {
            Some(a) => tx.execute(&sql, [a])?,
            None => tx.execute(&sql, [])?,
        };
        for sql in [
            "DELETE FROM contents WHERE seq IN (SELECT seq FROM purge_seqs)",
            "DELETE FROM documents WHERE seq IN (SELECT seq FROM purge_seqs)",
        ] {
            tx.execute(sql, [])?;
        }
        tx.execute(
            "UPDATE entries SET purged_at = ?1 WHERE seq IN (SELECT seq FROM purge_seqs)",
            [&now],
        )?;
        if let Some(tag) = tag {
            tx.execute(
                "INSERT OR IGNORE INTO purged_documents (tag, purged_at) VALUES (?1, ?2)",
                [tag, now.as_str()],
            )?;
        }
        Ok(n)
    };
    let n = run().map_err(&fail)?;
    tx.commit().map_err(&fail)?;
    // The removed bodies leave the write-ahead log and the file (zeroed by secure_delete).
    let checkpoint =
        |c: &Connection| c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    checkpoint(conn)
        .and_then(|()| conn.execute_batch("VACUUM"))
        .and_then(|()| checkpoint(conn))
        .map_err(&fail)?;
    Ok(n)
}

/// When the document of `tag` was purged, oldest first.
pub(crate) fn purges(conn: &Connection, tag: &str) -> Result<Vec<DateTime<Utc>>, ArchiveError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        conn.prepare_cached(
            "SELECT purged_at FROM purged_documents WHERE tag = ?1 ORDER BY purged_at",
        )?
        .query_map([tag], |r| r.get(0))?
        .collect()
    };
    Ok(run()
        .map_err(ArchiveError::sqlite("ler os expurgos"))?
        .iter()
        .map(|t| parse_instant(t))
        .collect())
}

/// True when any document purge is recorded.
pub(crate) fn has_purges(conn: &Connection) -> Result<bool, ArchiveError> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM purged_documents)")
        .and_then(|mut st| st.query_row([], |r| r.get(0)))
        .map_err(ArchiveError::sqlite("ler os expurgos"))
}

/// Walks the whole chain (see [`walk`]).
pub(crate) fn verify(conn: &Connection, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
    let all = select(conn, Filter::All)?;
    walk(&all, |seq| body(conn, seq), kept)
}

/// Links fingerprint `new` to `old`'s account (and everything linked to `new` with it).
pub(crate) fn link(conn: &mut Connection, old: &str, new: &str) -> Result<(), ArchiveError> {
    let fail = ArchiveError::sqlite("vincular contas");
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&fail)?;
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
    run().map_err(&fail)?;
    tx.commit().map_err(&fail)
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

#[cfg(test)]
mod tests {
    /// A file a newer version wrote (a schema this one does not know) is refused, not written.
    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.sqlite3");
        drop(crate::archive::Archive::open(&path).expect("archive"));
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.pragma_update(None, "user_version", super::VERSION + 1)
            .expect("version");
        drop(conn);
        let e = super::open(&path, true).expect_err("refused");
        assert!(
            crate::error_chain(&e).contains("versão mais nova"),
            "{}",
            crate::error_chain(&e)
        );
    }
}
