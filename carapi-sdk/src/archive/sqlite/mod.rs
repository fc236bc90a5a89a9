//! The archive in a SQLite file of this machine: a reader connection for lookups (which a
//! writer never blocks, under the write-ahead log), a writer thread that commits appends in
//! groups (`committer.rs`), and the file's locks across processes (`locks.rs`). SQLite's SQL
//! is in `sql.rs`.
//!
//! One process opens one file once, however many handles and clients use it (the archive's
//! registry, in `archive/mod.rs`): one reader, one writer, one queue, one set of flights.

mod committer;
mod locks;
mod sql;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use rusqlite::Connection;

use super::fork::ThisProcess;
use super::store::{BoxFuture, Claim, Filter, Store};
use super::{ArchiveError, Entry, Head, Kept, NewEntry, Verification};
use crate::EndpointConsulta;
use committer::{Committer, lock};
use locks::{Held, Locks};

/// A SQLite archive file, opened in this process.
pub(crate) struct Sqlite {
    path: PathBuf,
    shared: Arc<Shared>,
}

/// What the store and its claims share.
struct Shared {
    reader: ThisProcess<Mutex<Connection>>,
    committer: ThisProcess<Committer>,
    locks: ThisProcess<Locks>,
}

impl Sqlite {
    /// Opens the existing (maybe empty) file at `path`, creating or updating its tables under
    /// its open lock, so that processes opening one new file at once wait for each other.
    pub(crate) fn open(path: &Path) -> Result<Sqlite, ArchiveError> {
        let locks = Locks::open(path)?;
        let opening = locks.opening()?;
        let writer = sql::open(path, true)?;
        let reader = sql::open(path, false)?;
        drop(opening);
        Ok(Sqlite {
            path: path.to_path_buf(),
            shared: Arc::new(Shared {
                reader: ThisProcess::new(Mutex::new(reader)),
                committer: ThisProcess::new(Committer::start(writer)?),
                locks: ThisProcess::new(locks),
            }),
        })
    }
}

impl Shared {
    /// The reader, once every append this process sent is committed.
    fn read(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.committer.flush();
        lock(&self.reader)
    }

    /// Appends `new` through the writer thread; its entry once committed.
    fn append(&self, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>> {
        let entry = self.committer.append(new);
        Box::pin(async move {
            entry.await.unwrap_or_else(|_| {
                Err(ArchiveError::plain(
                    "gravar no acervo: gravador interrompido",
                ))
            })
        })
    }
}

impl Store for Sqlite {
    fn location(&self) -> &Path {
        &self.path
    }

    fn is_shared(&self) -> bool {
        false
    }

    fn latest(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>> {
        // An index lookup of a few microseconds on the reader, which no writer blocks: run here
        // (a round trip through another thread would cost more than the read).
        let found = sql::latest(&lock(&self.shared.reader), consulta, chave);
        Box::pin(std::future::ready(found))
    }

    fn claim(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Box<dyn Claim>, ArchiveError>> {
        let (shared, chave) = (Arc::clone(&self.shared), chave.to_owned());
        Box::pin(async move {
            let held = shared.locks.purchase(consulta, &chave).await?;
            Ok(Box::new(SqliteClaim { held, shared }) as Box<dyn Claim>)
        })
    }

    fn append(&self, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>> {
        self.shared.append(new)
    }

    fn purged_at(&self, tag: &str) -> BoxFuture<Result<Option<DateTime<Utc>>, ArchiveError>> {
        let found = sql::purges(&lock(&self.shared.reader), tag).map(|v| v.last().copied());
        Box::pin(std::future::ready(found))
    }

    fn select(&self, filter: Filter<'_>) -> Result<Vec<Entry>, ArchiveError> {
        sql::select(&self.shared.read(), filter)
    }

    fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
        sql::body(&self.shared.read(), seq)
    }

    fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
        sql::verify(&self.shared.read(), kept)
    }

    fn purge(
        &self,
        filter: Filter<'_>,
        tag: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<usize, ArchiveError> {
        sql::purge(&mut self.shared.committer.writer(), filter, tag, now)
    }

    fn purges(&self, tag: &str) -> Result<Vec<DateTime<Utc>>, ArchiveError> {
        sql::purges(&self.shared.read(), tag)
    }

    fn has_purges(&self) -> BoxFuture<Result<bool, ArchiveError>> {
        Box::pin(std::future::ready(sql::has_purges(&lock(
            &self.shared.reader,
        ))))
    }

    fn link(&self, old: &str, new: &str) -> Result<(), ArchiveError> {
        sql::link(&mut self.shared.committer.writer(), old, new)
    }

    fn linked(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
        sql::linked(&self.shared.read(), fingerprint)
    }

    fn limit_size(&self, bytes: u64) -> Result<(), ArchiveError> {
        sql::limit(&self.shared.committer.writer(), bytes)
    }
}

/// A purchase of one key held across processes by its byte-range lock, released once the
/// bought answer's entry commits (or the claim is dropped).
struct SqliteClaim {
    held: Held,
    shared: Arc<Shared>,
}

impl Claim for SqliteClaim {
    fn latest(
        &mut self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>> {
        let found = sql::latest(&lock(&self.shared.reader), consulta, chave);
        Box::pin(std::future::ready(found))
    }

    fn append(self: Box<Self>, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>> {
        let SqliteClaim { held, shared } = *self;
        let committed = shared.append(new);
        Box::pin(async move {
            let entry = committed.await;
            drop(held);
            entry
        })
    }
}
