//! The port of the archive: [`Store`], which the SQLite file (`sqlite/`) and the PostgreSQL
//! database (`postgres/`) implement with their own SQL, [`Claim`] (one purchase of a key
//! reserved across processes) and [`Filter`] (which entries a read or a purge concerns). The
//! lookup's path (the newest answer, the claim, the append) is asynchronous and never blocks a
//! runtime thread on the network; the audit tools (lists, verification, purges, exports) are
//! synchronous.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use chrono::{DateTime, Utc};

use super::chain::{consulta_of, parse_instant};
use super::{ArchiveError, Entry, Head, Kept, NewEntry, Verification};
use crate::EndpointConsulta;

/// A boxed future of the lookup's path (a backend's own, sent between tasks).
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

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
    Conta(&'a str),
    /// The entries bought before this instant (the archive's fixed-width form).
    Before(&'a str),
}

/// One archive backend.
pub(crate) trait Store: Send + Sync {
    /// The file, or the database's URL without its password.
    fn location(&self) -> &Path;

    /// True for a database shared by processes on several machines.
    fn is_shared(&self) -> bool;

    /// The newest kept answer of `consulta` for `chave` (the lookup's path).
    fn latest(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>>;

    /// Waits until no other process holds `consulta` + `chave`, then holds it until the claim
    /// appends or is dropped. Cancel-safe.
    fn claim(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Box<dyn Claim>, ArchiveError>>;

    /// Appends `new` (its documents extracted) without a claim; its entry once committed.
    fn append(&self, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>>;

    /// When the document of keyed hash `tag` was last purged, if it was (the lookup's path).
    fn purged_at(&self, tag: &str) -> BoxFuture<Result<Option<DateTime<Utc>>, ArchiveError>>;

    /// Entries matching `filter`, oldest first (what this process appended included).
    fn select(&self, filter: Filter<'_>) -> Result<Vec<Entry>, ArchiveError>;

    /// The exact body of entry `seq`; `None` once purged.
    fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError>;

    /// Walks the whole chain against the kept head.
    fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError>;

    /// Removes the contents of the entries `filter` selects, keeping their records; with
    /// `tag`, records that document's purge at `now`. Returns how many entries.
    fn purge(
        &self,
        filter: Filter<'_>,
        tag: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<usize, ArchiveError>;

    /// When the document of keyed hash `tag` was purged, oldest first.
    fn purges(&self, tag: &str) -> Result<Vec<DateTime<Utc>>, ArchiveError>;

    /// True when any document purge is recorded.
    fn has_purges(&self) -> BoxFuture<Result<bool, ArchiveError>>;

    /// Links fingerprint `new` to `old`'s account.
    fn link(&self, old: &str, new: &str) -> Result<(), ArchiveError>;

    /// The fingerprints linked to `fingerprint`'s account, itself included, sorted.
    fn linked(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError>;

    /// Caps the store at about `bytes`.
    fn limit_size(&self, bytes: u64) -> Result<(), ArchiveError>;
}

/// One purchase of a key reserved across processes ([`Store::claim`]): released when it appends
/// (once the entry commits) or is dropped.
pub(crate) trait Claim: Send {
    /// The newest kept answer, read under the claim.
    fn latest(
        &mut self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>>;

    /// Appends the bought answer (its documents extracted) and commits, then releases the
    /// claim.
    fn append(self: Box<Self>, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>>;
}

/// The columns of a row of the archive's entries, as both drivers read them.
pub(crate) trait Columns {
    /// The driver's error.
    type Error;
    /// Column `i` as text.
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    /// Column `i` as text or NULL.
    fn optional_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    /// Column `i` as an integer.
    fn integer(&self, i: usize) -> Result<i64, Self::Error>;
}

/// The columns an entry is read from, in the order [`entry_of`] reads them (`e` the entries,
/// `c` their contents).
pub(crate) const ENTRY_COLUMNS: &str = "e.seq, e.operation, e.preco, e.data_consulta, e.bought_at, \
     e.account, e.purpose, e.legal_basis, e.content_hash, e.prev_hash, e.hash, e.purged_at, c.chave";

/// The entry of a row of [`ENTRY_COLUMNS`]: the driver's error, or the archive's when a stored
/// value is none it writes.
pub(crate) fn entry_of<R: Columns>(r: &R) -> Result<Result<Entry, ArchiveError>, R::Error> {
    let operation = r.text(1)?;
    let consulta = match consulta_of(&operation) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(Entry {
        seq: r.integer(0)?.unsigned_abs(),
        consulta,
        preco: r.optional_text(2)?.and_then(|p| p.parse().ok()),
        data_consulta: r.optional_text(3)?,
        bought_at: parse_instant(&r.text(4)?),
        conta: r.text(5)?,
        purpose: r.text(6)?,
        legal_basis: r.text(7)?,
        content_hash: r.text(8)?,
        prev_hash: r.text(9)?,
        hash: r.text(10)?,
        purged_at: r.optional_text(11)?.map(|s| parse_instant(&s)),
        chave: r.optional_text(12)?,
    }))
}
