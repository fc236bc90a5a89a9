//! The archive of paid answers (cargo feature `archive`): every HTTP 200 of a charged lookup
//! kept as received, in a hash chain, so that the same answer is not bought twice while it is
//! fresh enough, and so that what was bought, when, at what price, for what purpose and under
//! which legal basis can be shown.
//!
//! # What is kept
//! One [`Entry`] per charged 200 of [`Client::car`](crate::Client::car),
//! [`car_completo`](crate::Client::car_completo), [`proprietario`](crate::Client::proprietario)
//! and [`recibo`](crate::Client::recibo): the exact body bytes, the key looked up (normalised),
//! the operation, the price charged (BRL, at the account's prices), `dataConsulta`, the instant
//! it was bought, the account (a [`fingerprint`] of the API key: the first 16 hex digits of its
//! SHA-256, never the key), the declared purpose and [`LegalBasis`]. Sandbox answers are not
//! kept (they cost nothing).
//!
//! # Where
//! An SQLite file ([`Archive::open`], [`Archive::open_default`]: the user's data directory,
//! created with mode 0600), or, for a team, a PostgreSQL database (`Archive::connect`, the
//! off-by-default feature `archive-postgres`; [`Archive::open_location`] takes either). Both
//! serialise appends (SQLite's write lock; a transaction-scoped advisory lock in PostgreSQL), so
//! the chain stays one line whatever the number of processes and machines.
//!
//! # The chain
//! Each entry's hash (SHA-256) covers its content's hash (key and body), its record and the
//! previous entry's hash. [`Archive::head`] is the last entry's sequence number and hash: keep it
//! elsewhere (a ticket, an e-mail, another machine), and [`Archive::verify`] against it detects a
//! changed byte, a removed or truncated entry, and a chain recomputed from scratch. Without a
//! kept head, a rewrite of the whole chain cannot be told from the original: keep heads.
//!
//! # Freshness: the policy
//! [`ArchivePolicy`] holds the purpose, the legal basis and the [`Freshness`]. With
//! [`Freshness::MaxAge`], a lookup whose last kept answer is younger is answered from the
//! archive, with no request and no charge ([`Archived::origin`] says so, with the instant it was
//! bought); [`Client::gasto`](crate::Client::gasto) does not move. A purged answer is never
//! served (it is bought again). [`Freshness::Never`] keeps every answer and always buys. An
//! archive that cannot be read fails the lookup before anything is sent ([`crate::Error::Archive`]:
//! never silently re-bought); a bought answer that cannot be appended (a full disk, the database
//! away) is still returned, with [`Archived::warning`] and a WARN event.
//!
//! # One purchase per key
//! Concurrent lookups of one key in one process send one request: the others wait for it and
//! read the archive. On a PostgreSQL archive the same holds across processes: the buyer holds a
//! per-key lock (`pg_advisory_xact_lock` in a transaction) for the length of the purchase, and a
//! process that meets it waits, then reads the archive. If the buyer gets an error, or its
//! future is dropped, the transaction is rolled back, which releases the lock, and the waiter
//! buys (or reports its own error): one 200 is never paid twice. A process that dies releases
//! its lock with its connection.
//!
//! # Cost
//! On a SQLite archive the `*_archived` lookups
//! ([`Client::car_archived`](crate::Client::car_archived) and the others) return once the bought
//! answer is committed, with its [`Archived::seq`] or a [`Archived::warning`]. The plain lookups
//! ([`Client::car`](crate::Client::car) and the others), which give neither, return as soon as the
//! answer is bought and leave its append to the archive's committer, a task of tokio's blocking
//! pool that lets a group gather for 5 ms and commits it in one transaction, in order: a batch does
//! not wait for each commit. An append that fails there is a WARN event. In this process every read
//! of the archive commits what is queued or being committed first (a lookup of a key, only when
//! that key is), so a second lookup of a key never buys it again; the end of the tokio runtime
//! waits for the committer, and dropping the last handle of the archive commits what is left. A
//! crash of the program, or `std::process::exit` (which runs no drop), loses what was queued (the
//! last 5 ms or so of answers, which would then be bought again), as it loses an answer bought but
//! not yet committed by a waiting lookup; SQLite's `synchronous = NORMAL` under its write-ahead log
//! means a power cut can lose the last few commits too. The read of a key's newest answer runs on
//! the calling task, on a connection of its own, which no writer blocks (`cargo bench -p
//! carapi-tests --bench figures -- archive` prints the cost of a batch).
//!
//! # Key rotation
//! Entries name the account by its key's fingerprint, and the API names no account (contract,
//! "Authentication"). After a rotation, [`Archive::link_accounts`] records that the new
//! fingerprint is the old one's account: [`Archive::account_entries`] of either lists the
//! entries of both (links are transitive). The CLI's `carapi login` does it when the server
//! refuses the key it replaces.
//!
//! # The LGPD (Lei 13.709/2018)
//! The API client is the controller of the personal data it looks up (owners' names and
//! CPF/CNPJ: the contract makes it answer for the legal basis of the processing). The archive
//! supports its duties; it does not discharge them:
//!
//! | Duty | Article | Here |
//! |---|---|---|
//! | a legal basis for each processing, sensitive data apart | arts. 7 and 11 | [`LegalBasis`], recorded with every entry and required before any request |
//! | a specific, explicit purpose | art. 6, I | [`ArchivePolicy::purpose`], recorded with every entry |
//! | the subject's access to the processing and to the data held | arts. 9 and 18, I and II | [`Archive::subject`]: every entry holding a CPF/CNPJ (owner lookups, complete answers, receipt PDFs) |
//! | elimination when the purpose is met, or on the subject's request | art. 16; art. 18, IV and VI | [`Archive::purge_documento`], [`Archive::purge_before`]: the content goes (SQLite overwrites its pages), the charge record and a verifiable chain stay |
//! | a record of the processing operations | art. 37 | [`Archive::export_csv`], [`Archive::export_json`]: what, when, price, purpose, legal basis, hash |
//! | security measures against unauthorised access and alteration | art. 46 | the file readable by its owner only (0600), no API key stored, the hash chain against a kept head |
//!
//! A PostgreSQL archive's access control, encryption in transit and backups are the team's
//! database's (its connection here is not encrypted: a trusted network or a tunnel); a purge
//! removes the rows, and the database's own retention (WAL, backups) applies to them.

mod chain;
mod documents;
mod legal_basis;
mod local;
#[cfg(feature = "archive-postgres")]
mod postgres;
mod store;

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;

pub use legal_basis::{LegalBasis, UnknownLegalBasis};

pub use chain::fingerprint;
#[cfg(feature = "archive-postgres")]
pub(crate) use postgres::Claim;

use crate::CpfCnpj;

/// The archive's file name inside the user's data directory.
pub const DEFAULT_FILE_NAME: &str = "acervo.sqlite3";

/// An archive operation failed (the file cannot be opened or written, the disk is full, a
/// stored value is unreadable). Its text never holds a key, code or document.
#[derive(Debug, thiserror::Error)]
#[error("acervo: não foi possível {what}")]
pub struct ArchiveError {
    what: &'static str,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl ArchiveError {
    fn sqlite(what: &'static str) -> impl Fn(rusqlite::Error) -> ArchiveError {
        move |e| ArchiveError {
            what,
            source: Some(Box::new(e)),
        }
    }

    fn io(what: &'static str) -> impl Fn(std::io::Error) -> ArchiveError {
        move |e| ArchiveError {
            what,
            source: Some(Box::new(e)),
        }
    }

    fn plain(what: &'static str) -> ArchiveError {
        ArchiveError { what, source: None }
    }

    /// True when the archive ran out of room (the disk, or [`Archive::with_max_size`]).
    #[must_use]
    pub fn is_full(&self) -> bool {
        let source = self.source.as_deref();
        #[cfg(feature = "archive-postgres")]
        if source
            .and_then(|s| s.downcast_ref::<sqlx::Error>())
            .is_some_and(postgres::is_full)
        {
            return true;
        }
        source
            .and_then(|s| s.downcast_ref::<rusqlite::Error>())
            .and_then(rusqlite::Error::sqlite_error_code)
            == Some(rusqlite::ErrorCode::DiskFull)
    }
}

/// How long an archived answer may stand in for a new lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// An answer bought less than this long ago is reused (no request, no charge).
    MaxAge(Duration),
    /// Never reuse: every lookup buys (and is kept).
    Never,
}

/// What the client declares for every lookup it archives, and when it reuses an answer.
///
/// The purpose (free text) and the legal basis are required:
/// [`ClientBuilder::archive`](crate::ClientBuilder::archive) refuses a blank purpose before any
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivePolicy {
    /// Why the data is looked up (LGPD art. 6, I: a specific, explicit purpose).
    pub purpose: String,
    /// The hypothesis of LGPD art. 7 or art. 11 the processing rests on.
    pub legal_basis: LegalBasis,
    /// When an archived answer is reused.
    pub freshness: Freshness,
}

impl ArchivePolicy {
    /// A policy with `purpose`, `legal_basis` and `freshness`.
    #[must_use]
    pub fn new(purpose: impl Into<String>, legal_basis: LegalBasis, freshness: Freshness) -> Self {
        Self {
            purpose: purpose.into(),
            legal_basis,
            freshness,
        }
    }
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Bought now from the API (charged).
    Api,
    /// Read from the archive: no request, no charge.
    Archive,
}

impl Origin {
    /// `api` or `acervo`, the word the CLI and Python print.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Api => "api",
            Origin::Archive => "acervo",
        }
    }
}

/// An answer of a lookup made with an archive, and where it came from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Archived<T> {
    /// The answer.
    pub value: T,
    /// Bought now, or read from the archive.
    pub origin: Origin,
    /// When it was bought (now, for [`Origin::Api`]).
    pub bought_at: DateTime<Utc>,
    /// Its entry in the archive; `None` when it could not be archived (see `warning`).
    pub seq: Option<u64>,
    /// Set when the answer was bought but could not be archived (disk full, archive away): the
    /// answer is good and was charged, but it is not in the archive.
    pub warning: Option<String>,
}

impl<T> Archived<T> {
    /// The same provenance around another value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Archived<U> {
        Archived {
            value: f(self.value),
            origin: self.origin,
            bought_at: self.bought_at,
            seq: self.seq,
            warning: self.warning,
        }
    }
}

/// The last entry of the chain: keep it elsewhere and give it to [`Archive::verify`].
/// Written `seq:hash` ([`fmt::Display`], [`FromStr`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Head {
    /// Sequence number of the last entry (from 1).
    pub seq: u64,
    /// Its SHA-256, lower-case hex.
    pub hash: String,
}

impl fmt::Display for Head {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

impl FromStr for Head {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (seq, hash) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("cabeça inválida {s:?}: esperado <seq>:<hash>"))?;
        let seq = seq
            .parse()
            .map_err(|_| format!("cabeça inválida {s:?}: número de sequência"))?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "cabeça inválida {s:?}: hash de 64 dígitos hexadecimais"
            ));
        }
        Ok(Head {
            seq,
            hash: hash.to_ascii_lowercase(),
        })
    }
}

/// One archived lookup (its record; the body is read with [`Archive::body`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Entry {
    /// Sequence number in the chain (from 1).
    pub seq: u64,
    /// The SDK operation: `car`, `car_completo`, `proprietario` or `recibo`.
    pub operation: String,
    /// The key looked up, normalised (CAR code, bare document); `None` once purged.
    pub chave: Option<String>,
    /// The price charged, BRL; `None` when the account's prices were unknown.
    pub preco: Option<Decimal>,
    /// `dataConsulta` of the answer, as received (`None` for the receipt).
    pub data_consulta: Option<String>,
    /// When it was bought (the client's clock), UTC.
    pub bought_at: DateTime<Utc>,
    /// The account: the first 16 hex digits of the SHA-256 of its API key.
    pub account: String,
    /// The declared purpose.
    pub purpose: String,
    /// The declared legal basis ([`LegalBasis::as_str`]).
    pub legal_basis: String,
    /// SHA-256 of the key and the body (kept after a purge).
    pub content_hash: String,
    /// The previous entry's hash.
    pub prev_hash: String,
    /// This entry's hash.
    pub hash: String,
    /// When its content was purged, if it was.
    pub purged_at: Option<DateTime<Utc>>,
}

/// The outcome of [`Archive::verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Verification {
    /// Entries walked.
    pub entries: u64,
    /// Entries whose content was purged (their hashes still checked).
    pub purged: u64,
    /// The chain's last entry as found now.
    pub head: Option<Head>,
    /// What does not hold, one line each (empty when the chain verifies).
    pub failures: Vec<String>,
}

impl Verification {
    /// True when nothing failed.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What the client appends for one bought answer.
#[derive(Debug, Clone)]
pub(crate) struct NewEntry {
    pub(crate) operation: &'static str,
    pub(crate) chave: String,
    pub(crate) body: Vec<u8>,
    pub(crate) preco: Option<Decimal>,
    pub(crate) data_consulta: Option<String>,
    pub(crate) bought_at: DateTime<Utc>,
    pub(crate) account: String,
    pub(crate) purpose: String,
    pub(crate) legal_basis: LegalBasis,
    pub(crate) documentos: Vec<String>,
}

impl NewEntry {
    /// The documents of `body` (and the key of an owner lookup), for [`Archive::subject`].
    pub(crate) fn with_documents(mut self) -> Self {
        let mut docs = documents::extract(&self.body, self.operation == "recibo");
        if self.operation == "proprietario" {
            docs.push(self.chave.clone());
        }
        docs.sort();
        docs.dedup();
        self.documentos = docs;
        self
    }
}

/// The archive of paid answers: a SQLite file, or a PostgreSQL database shared by a team
/// (feature `archive-postgres`); see the [module docs](self).
///
/// Cheap to clone (clones share the same connections, or one pool); `Send + Sync`. Several
/// processes may use one archive: appends are serialised (SQLite's write lock; a PostgreSQL
/// transaction lock), so the chain stays one line.
#[derive(Clone)]
pub struct Archive {
    backend: Backend,
    path: Arc<PathBuf>,
}

/// Where the entries live.
#[derive(Clone)]
enum Backend {
    Sqlite(Arc<local::Local>),
    #[cfg(feature = "archive-postgres")]
    Postgres(postgres::Pg),
}

impl fmt::Debug for Archive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archive").field("path", &self.path).finish()
    }
}

/// True when `location` names a PostgreSQL database (`postgres://` or `postgresql://`).
#[must_use]
pub fn is_postgres_url(location: &str) -> bool {
    let l = location.trim_start();
    l.starts_with("postgres://") || l.starts_with("postgresql://")
}

impl Archive {
    /// The default file: `acervo.sqlite3` in the user's data directory
    /// (`~/.local/share/carapi/` on Linux, `~/Library/Application Support/br.carapi.carapi/`
    /// on macOS, `%APPDATA%\carapi\carapi\data\` on Windows); `None` when the system names no
    /// home directory.
    #[must_use]
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("br", "carapi", "carapi")
            .map(|d| d.data_dir().join(DEFAULT_FILE_NAME))
    }

    /// Opens (creating it if needed) the archive at [`Archive::default_path`].
    ///
    /// # Errors
    /// As [`Archive::open`]; also when there is no home directory.
    pub fn open_default() -> Result<Archive, ArchiveError> {
        let path = Self::default_path()
            .ok_or_else(|| ArchiveError::plain("achar a pasta de dados do usuário"))?;
        Self::open(path)
    }

    /// Opens (creating it, and its folder, if needed) the archive file at `path`. A new file is
    /// created readable and writable by its owner only (mode 0600 on Unix).
    ///
    /// # Errors
    /// [`ArchiveError`] when the folder or file cannot be created or is not an archive.
    pub fn open(path: impl AsRef<Path>) -> Result<Archive, ArchiveError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(ArchiveError::io("criar a pasta do acervo"))?;
        }
        create_private(path)?;
        Ok(Archive {
            backend: Backend::Sqlite(Arc::new(local::Local::open(path)?)),
            path: Arc::new(path.to_owned()),
        })
    }

    /// Opens the archive `location` names: a PostgreSQL URL (`postgres://...`, see
    /// `Archive::connect`, feature `archive-postgres`) or a file path ([`Archive::open`]).
    ///
    /// # Errors
    /// As [`Archive::open`] and `Archive::connect`; a PostgreSQL URL when this build has no
    /// feature `archive-postgres`.
    pub fn open_location(location: &str) -> Result<Archive, ArchiveError> {
        if !is_postgres_url(location) {
            return Self::open(location);
        }
        #[cfg(feature = "archive-postgres")]
        {
            Self::connect(location)
        }
        #[cfg(not(feature = "archive-postgres"))]
        {
            Err(ArchiveError::plain(
                "abrir um acervo PostgreSQL: esta compilação não tem o recurso archive-postgres",
            ))
        }
    }

    /// Connects to the team archive in the PostgreSQL database at `url` (`postgres://...`;
    /// its tables, named `archive_*`, are created in the connection's schema, which the URL
    /// may set: `?options=-c%20search_path%3Dacervo`). Its connections live on a thread of
    /// their own. Appends from every process are serialised by a transaction lock, and two
    /// processes looking up the same key at once buy it once (see the [module docs](self)).
    /// The connection is not encrypted (no TLS in this build): use it on a trusted network or
    /// through a tunnel.
    ///
    /// # Errors
    /// [`ArchiveError`] when the URL is invalid, the database cannot be reached or the tables
    /// cannot be created.
    #[cfg(feature = "archive-postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "archive-postgres")))]
    pub fn connect(url: &str) -> Result<Archive, ArchiveError> {
        let pg = postgres::Pg::connect(url)?;
        Ok(Archive {
            path: Arc::new(PathBuf::from(pg.redacted())),
            backend: Backend::Postgres(pg),
        })
    }

    /// Caps the archive's file at about `bytes`: an answer that would pass it is not archived
    /// (the lookup still returns it, with [`Archived::warning`]), as on a full disk.
    ///
    /// # Errors
    /// [`ArchiveError`] when the limit cannot be set, or the archive is a PostgreSQL database.
    pub fn with_max_size(self, bytes: u64) -> Result<Archive, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => store::limit(&c.write(), bytes)?,
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(_) => {
                return Err(ArchiveError::plain(
                    "limitar o tamanho de um acervo PostgreSQL",
                ));
            }
        }
        Ok(self)
    }

    /// The file this archive lives in; for a PostgreSQL archive, its URL without the password.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True for a PostgreSQL archive (a team's, shared by processes on several machines).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        !matches!(self.backend, Backend::Sqlite(_))
    }

    /// The chain's last entry; `None` while the archive is empty.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn head(&self) -> Result<Option<Head>, ArchiveError> {
        let last = match &self.backend {
            Backend::Sqlite(c) => {
                store::select(&c.read(), "e.seq = (SELECT MAX(seq) FROM entries)", None)?.pop()
            }
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.select(postgres::Filter::Last)?.pop(),
        };
        Ok(last.map(|e| Head {
            seq: e.seq,
            hash: e.hash,
        }))
    }

    /// Walks the chain: recomputes every entry's hash and every kept content's hash, checks
    /// each entry points at the one before and none is missing, and, with `kept`, that the
    /// head kept elsewhere is still in the chain with the same hash (which detects a removed
    /// newest entry and a chain recomputed from scratch).
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read (a chain that does not verify is an
    /// `Ok` whose [`Verification::failures`] say why).
    pub fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => store::verify(&c.read(), kept),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.verify(kept),
        }
    }

    /// Every entry, oldest first.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn entries(&self) -> Result<Vec<Entry>, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => store::select(&c.read(), "1 = 1", None),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.select(postgres::Filter::All),
        }
    }

    /// The entries bought by the account `fingerprint` names ([`fingerprint`] of its key),
    /// with those of every key linked to it ([`Archive::link_accounts`]: after a key rotation,
    /// both fingerprints list the same entries), oldest first.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn account_entries(&self, fingerprint: &str) -> Result<Vec<Entry>, ArchiveError> {
        let fingerprint = fingerprint.trim().to_ascii_lowercase();
        match &self.backend {
            Backend::Sqlite(c) => store::select(&c.read(), store::OF_ACCOUNT, Some(&fingerprint)),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.select(postgres::Filter::Account(&fingerprint)),
        }
    }

    /// Records that the key of fingerprint `new` belongs to the account of fingerprint `old`
    /// (a rotated key: the API names no account, so the caller who holds both keys says so).
    /// From then on [`Archive::account_entries`] of either lists the entries of both. Links
    /// are transitive (a second rotation links the third key to the first).
    ///
    /// # Errors
    /// [`ArchiveError`] when a fingerprint is not 16 hex digits or the archive cannot be
    /// written.
    pub fn link_accounts(&self, old: &str, new: &str) -> Result<(), ArchiveError> {
        let (old, new) = (
            old.trim().to_ascii_lowercase(),
            new.trim().to_ascii_lowercase(),
        );
        for fp in [&old, &new] {
            if fp.len() != 16 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ArchiveError::plain(
                    "vincular contas: a impressão de uma chave tem 16 dígitos hexadecimais",
                ));
            }
        }
        if old == new {
            return Ok(());
        }
        match &self.backend {
            Backend::Sqlite(c) => store::link(&mut c.write(), &old, &new),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.link(&old, &new),
        }
    }

    /// The fingerprints linked to `fingerprint`'s account, itself included, sorted.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn linked_accounts(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
        let fingerprint = fingerprint.trim().to_ascii_lowercase();
        match &self.backend {
            Backend::Sqlite(c) => store::linked(&c.read(), &fingerprint),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.linked(&fingerprint),
        }
    }

    /// The entry `seq`, if any.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn entry(&self, seq: u64) -> Result<Option<Entry>, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => {
                let seq = i64::try_from(seq).unwrap_or(i64::MAX).to_string();
                Ok(store::select(&c.read(), "e.seq = CAST(?1 AS INTEGER)", Some(&seq))?.pop())
            }
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => Ok(pg.select(postgres::Filter::Seq(seq))?.pop()),
        }
    }

    /// The exact body bytes of entry `seq` (JSON, or the receipt PDF); `None` once purged.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => store::body(&c.read(), seq),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.body(seq),
        }
    }

    /// Every entry holding `documento` (a data subject's access request, LGPD art. 18, II):
    /// owner lookups of it, and complete answers and receipts that name it as an owner.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn subject(&self, documento: &CpfCnpj) -> Result<Vec<Entry>, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => {
                store::select(&c.read(), store::HOLDING, Some(documento.as_str()))
            }
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.select(postgres::Filter::Holding(documento.as_str())),
        }
    }

    /// Removes the content (key, body, documents) of every entry holding `documento` (LGPD
    /// art. 18, VI), keeping each entry's record (operation, price, dates, purpose, legal
    /// basis) and hashes: [`Archive::verify`] still passes. Returns how many entries.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be written.
    pub fn purge_documento(&self, documento: &CpfCnpj) -> Result<usize, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => store::purge(
                &mut c.write(),
                store::HOLDING,
                documento.as_str(),
                Utc::now(),
            ),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.purge(postgres::Filter::Holding(documento.as_str())),
        }
    }

    /// Removes the content of every entry bought before `before` (see
    /// [`Archive::purge_documento`]). Returns how many entries.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be written.
    pub fn purge_before(&self, before: DateTime<Utc>) -> Result<usize, ArchiveError> {
        let before = chain::instant(before);
        match &self.backend {
            Backend::Sqlite(c) => {
                store::purge(&mut c.write(), "e.bought_at < ?1", &before, Utc::now())
            }
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.purge(postgres::Filter::Before(&before)),
        }
    }

    /// Writes every entry's record as a JSON array (for an auditor: what, when, price, purpose,
    /// legal basis, hash; no bodies).
    ///
    /// # Errors
    /// [`ArchiveError`] when the file cannot be read or `out` written.
    pub fn export_json(&self, out: impl Write) -> Result<(), ArchiveError> {
        let entries = self.entries()?;
        serde_json::to_writer_pretty(out, &entries).map_err(|e| ArchiveError {
            what: "exportar",
            source: Some(Box::new(e)),
        })
    }

    /// Writes every entry's record as CSV (header line first; same columns as the JSON).
    ///
    /// # Errors
    /// [`ArchiveError`] when the file cannot be read or `out` written.
    pub fn export_csv(&self, mut out: impl Write) -> Result<(), ArchiveError> {
        let entries = self.entries()?;
        let io = ArchiveError::io("exportar");
        writeln!(out, "seq,operation,chave,preco,data_consulta,bought_at,account,purpose,legal_basis,content_hash,prev_hash,hash,purged_at").map_err(&io)?;
        for e in entries {
            let fields = [
                e.seq.to_string(),
                e.operation,
                e.chave.unwrap_or_default(),
                e.preco.map(|p| p.to_string()).unwrap_or_default(),
                e.data_consulta.unwrap_or_default(),
                chain::instant(e.bought_at),
                e.account,
                e.purpose,
                e.legal_basis,
                e.content_hash,
                e.prev_hash,
                e.hash,
                e.purged_at.map(chain::instant).unwrap_or_default(),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            writeln!(out, "{}", line.join(",")).map_err(&io)?;
        }
        Ok(())
    }

    /// The newest entry still holding its answer for `operation` (`car`, `car_completo`,
    /// `proprietario`, `recibo`) and `chave` (normalised: [`crate::CodigoCar::as_str`],
    /// [`CpfCnpj::as_str`]): what a lookup would be answered with, e.g. to preview a batch.
    ///
    /// # Errors
    /// [`ArchiveError`] when the file cannot be read.
    pub fn latest_entry(
        &self,
        operation: &str,
        chave: &str,
    ) -> Result<Option<Entry>, ArchiveError> {
        Ok(self.latest(operation, chave)?.map(|(e, _)| e))
    }

    /// True when `entry` is young enough under `freshness` to answer a lookup, now.
    #[must_use]
    pub fn is_fresh(entry: &Entry, freshness: Freshness) -> bool {
        match freshness {
            Freshness::Never => false,
            Freshness::MaxAge(max) => Utc::now()
                .signed_duration_since(entry.bought_at)
                .to_std()
                .is_ok_and(|age| age < max),
        }
    }

    /// Appends `new` and returns its entry once committed.
    pub(crate) fn append(&self, new: NewEntry) -> Result<Entry, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => c.append(new),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.append(&new),
        }
    }

    /// Leaves `new` (its documents not yet extracted) to a SQLite archive's committer and
    /// returns at once (`None`); any other archive gives it back, to be appended and waited
    /// for.
    pub(crate) fn append_behind(&self, new: NewEntry) -> Option<NewEntry> {
        match &self.backend {
            Backend::Sqlite(c) => {
                c.append_behind(new);
                None
            }
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(_) => Some(new),
        }
    }

    /// True when an append of `operation` for `chave` waits for a SQLite archive's committer.
    pub(crate) fn has_pending(&self, operation: &str, chave: &str) -> bool {
        match &self.backend {
            Backend::Sqlite(c) => c.has_pending(operation, chave),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(_) => false,
        }
    }

    /// The PostgreSQL archive, whose claims single-flight a key across processes.
    #[cfg(feature = "archive-postgres")]
    pub(crate) fn postgres(&self) -> Option<&postgres::Pg> {
        match &self.backend {
            Backend::Postgres(pg) => Some(pg),
            Backend::Sqlite(_) => None,
        }
    }

    pub(crate) fn latest(
        &self,
        operation: &str,
        chave: &str,
    ) -> Result<Option<(Entry, Vec<u8>)>, ArchiveError> {
        match &self.backend {
            Backend::Sqlite(c) => c.latest(operation, chave),
            #[cfg(feature = "archive-postgres")]
            Backend::Postgres(pg) => pg.latest(operation, chave),
        }
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// Creates `path` empty with mode 0600 when it does not exist.
fn create_private(path: &Path) -> Result<(), ArchiveError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    match opts.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(ArchiveError::io("criar o arquivo do acervo")(e)),
    }
}
