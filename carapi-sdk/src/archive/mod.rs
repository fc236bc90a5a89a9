//! The archive of paid answers (cargo feature `archive`): every HTTP 200 of a charged lookup
//! kept as received, in a hash chain, so that the same answer is not bought twice while it is
//! fresh enough, and so that what was bought, when, at what price, for what purpose and under
//! which legal basis can be shown.
//!
//! # What is kept
//! One [`Entry`] per charged 200 of [`Client::car`](crate::Client::car),
//! [`car_completo`](crate::Client::car_completo), [`proprietario`](crate::Client::proprietario)
//! and [`recibo`](crate::Client::recibo) (every way of getting the receipt): the exact body
//! bytes, the key looked up (normalised), the lookup
//! ([`EndpointConsulta`](crate::EndpointConsulta)), the price charged (BRL, at the account's
//! prices), `dataConsulta`, the instant it was bought, the account (a [`fingerprint`] of the API
//! key: the first 16 hex digits of its SHA-256, never the key), the declared purpose and
//! [`LegalBasis`]. Sandbox answers are not kept (they cost nothing).
//!
//! # Where
//! An SQLite file ([`Archive::open`], [`Archive::open_default`]: the user's data directory,
//! created with mode 0600, with two files beside it: `-travas`, the locks between processes,
//! and `-expurgos.chave`, see "The LGPD" below), or, for a team, a PostgreSQL database
//! (`Archive::connect`, the off-by-default feature `archive-postgres`;
//! [`Archive::open_location`] takes either). Both serialise appends (SQLite's write lock; a
//! transaction-scoped advisory lock in PostgreSQL), so the chain stays one line whatever the
//! number of processes and machines. One process opens one file once: every
//! [`Archive::open`] of it (two clients, a service's lookups and its audit endpoint) shares one
//! reader, one writer and one queue, so a read through any handle sees what any lookup of the
//! process has returned. The [`Archive`] methods other than the lookups' (lists, verification,
//! purges, exports) block the calling thread while they run: call them from a blocking context
//! (`tokio::task::spawn_blocking`) in an async service.
//!
//! # The chain
//! Each entry's hash (SHA-256) covers its content's hash (key and body), its record and the
//! previous entry's hash. [`Archive::head`] is the last entry's sequence number and hash: keep it
//! elsewhere (a ticket, an e-mail, another machine), and [`Archive::verify`] against it detects a
//! changed byte, a removed or truncated entry, and a chain recomputed from scratch. Without a
//! kept head, a rewrite of the whole chain cannot be told from the original: keep heads. An
//! answer is served from the archive only after its content's hash and its entry's hash are
//! checked (microseconds): an altered entry fails the lookup ([`ArchiveErrorKind::Tampered`],
//! naming the entry) and nothing is bought; buying it again is an explicit decision
//! ([`Client::with_freshness`](crate::Client::with_freshness) with [`Freshness::Never`]).
//!
//! # Freshness: the policy
//! [`ArchivePolicy`] holds the purpose, the legal basis and the [`Freshness`]. With
//! [`Freshness::MaxAge`], a lookup whose last kept answer is younger is answered from the
//! archive, with no request and no charge ([`Answer::origin`](crate::Answer::origin) says so,
//! with the instant it was bought); [`Client::gasto`](crate::Client::gasto) does not move. A
//! purged answer is never served (it is bought again). [`Freshness::Never`] keeps every answer
//! and always buys. An archive that cannot be read fails the lookup before anything is sent
//! ([`crate::Error::Archive`]: never silently re-bought); a bought answer that cannot be
//! appended (a full disk, the database away) is still returned, with
//! [`Answer::warning`](crate::Answer::warning) and a WARN event.
//!
//! # One purchase per key
//! Concurrent lookups of one key send one request, in one process (through every client and
//! handle of the archive) and across processes: the buyer holds the key (a byte-range lock on
//! the SQLite archive's `-travas` file, which the kernel frees if the process dies; a
//! `pg_advisory_xact_lock` in a transaction on PostgreSQL) from before it sends until the bought
//! answer is committed, and whoever meets it waits, then reads the archive. If the buyer gets an
//! error, the key is released unappended and the waiter buys (or reports its own error): one 200
//! is never paid twice. No SQLite write transaction is held across a request.
//!
//! # Cost, cancellation and the end of a program
//! A lookup returns once its bought answer is committed, with its
//! [`Answer::seq`](crate::Answer::seq) (or a warning): the writer commits the answers of
//! concurrent lookups in one transaction, so a batch shares commits. A handle made with
//! [`Client::with_commit`](crate::Client::with_commit)`(`[`Commit::Behind`]`)` returns as soon as
//! the answer arrives and leaves the commit to the purchase (the key stays held until it
//! commits). A purchase, once sent, runs in a task the client owns ([`Client::close`](crate::Client::close)
//! waits for them): a dropped lookup (a `tokio::time::timeout`, a `select!`, a handler whose
//! client went away) still has its answer counted and committed, and a later lookup of the key
//! waits for that commit and reads the archive. What can still be lost is what a crash loses: a
//! program that ends without [`Client::close`](crate::Client::close) (returning from an async
//! `main` while purchases run, `std::process::exit`, a kill) loses the answers paid and not yet
//! committed, which the next lookup of their keys buys again; SQLite's `synchronous = NORMAL`
//! under its write-ahead log means a power cut can lose the last few commits too. The
//! [`blocking`](crate) client's lookups return after the commit, and its drop calls `close`.
//! A SQLite archive's read of a key runs on the calling task, on a connection of its own, which
//! no writer blocks; a PostgreSQL archive's reads, claims and appends run on a runtime thread of
//! the archive, awaited, and hold a pooled connection only while they run (`cargo bench -p
//! carapi-tests --bench figures -- archive` prints the cost of a batch).
//!
//! # Key rotation
//! Entries name the account by its key's fingerprint, and the API names no account (contract,
//! "Authentication"). After a rotation, [`Archive::link_contas`] records that the new
//! fingerprint is the old one's account: [`Archive::conta_entries`] of either lists the
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
//! | the subject's access to the processing and to the data held | arts. 9 and 18, I and II | [`Archive::subject`]: every entry holding a CPF/CNPJ (owner lookups, complete answers, receipt PDFs); [`Archive::purges_of`]: when it was purged |
//! | elimination when the purpose is met, or on the subject's request | art. 16; art. 18, IV and VI | [`Archive::purge_documento`], [`Archive::purge_before`]: the content goes (SQLite overwrites its pages), the charge record and a verifiable chain stay |
//! | not processing again what the subject had eliminated | art. 18, VI; art. 16 | a purged document is remembered by a keyed hash: its owner lookup is refused before anything is sent ([`ArchiveErrorKind::Purged`]) unless the caller decides otherwise ([`Client::with_purged_allowed`](crate::Client::with_purged_allowed)); a complete answer or receipt that names it is returned and kept with a warning naming the purge |
//! | a record of the processing operations | art. 37 | [`Archive::export_csv`], [`Archive::export_json`]: what, when, price, purpose, legal basis, hash |
//! | security measures against unauthorised access and alteration | art. 46 | the file readable by its owner only (0600), no API key stored, the hash chain against a kept head, every served answer checked |
//!
//! The purged documents' tags are HMAC-SHA-256 of the bare document under a key kept outside the
//! archive, in a file of its own ([`ArchiveOptions::purge_key_file`]): pseudonymised personal
//! data (art. 13, § 4), which whoever holds the archive alone cannot read back. Without its key
//! file an archive that recorded purges refuses owner lookups, as it cannot tell them apart.
//!
//! A PostgreSQL archive's access control, encryption in transit and backups are the team's
//! database's (its connection here is not encrypted: a trusted network or a tunnel); a purge
//! removes the rows, and the database's own retention (WAL, backups) applies to them.

mod audit;
mod chain;
mod consulta;
mod documents;
mod error;
mod export;
mod flights;
mod fork;
mod legal_basis;
mod options;
#[cfg(feature = "archive-postgres")]
mod postgres;
mod purge_key;
mod sqlite;
mod store;
mod types;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

pub use chain::fingerprint;
pub use error::{ArchiveError, ArchiveErrorKind};
pub use legal_basis::{LegalBasis, UnknownLegalBasis};
pub use options::ArchiveOptions;
pub use types::{ArchivePolicy, Commit, Entry, Freshness, Head, Verification};

pub(crate) use flights::Flight;
pub(crate) use store::Claim;
pub(crate) use types::{Kept, NewEntry};

use purge_key::PurgeKey;
use store::Store;

/// The archive's file name inside the user's data directory.
pub const DEFAULT_FILE_NAME: &str = "acervo.sqlite3";

/// The archive of paid answers: a SQLite file, or a PostgreSQL database shared by a team
/// (feature `archive-postgres`); see the [module docs](self).
///
/// Cheap to clone (clones, and every other [`Archive::open`] of the same file in this process,
/// share one set of connections); `Send + Sync`. Several processes may use one archive: appends
/// are serialised (SQLite's write lock; a PostgreSQL transaction lock), so the chain stays one
/// line, and a key is bought by one of them at a time.
#[derive(Clone)]
pub struct Archive {
    core: Arc<Core>,
}

/// One archive opened in one process.
struct Core {
    store: Box<dyn Store>,
    flights: Arc<flights::Flights>,
    /// How to open it again (a child after `fork()` opens its own).
    location: Location,
    /// The purged documents' key file.
    purge_key_path: Option<PathBuf>,
    /// The key, once read.
    purge_key: Mutex<Option<PurgeKey>>,
    pid: u32,
}

/// What an archive was opened from.
#[derive(Clone)]
enum Location {
    File(PathBuf, ArchiveOptions),
    #[cfg(feature = "archive-postgres")]
    Database(String, ArchiveOptions),
}

impl fmt::Debug for Archive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Archive")
            .field("path", &self.path())
            .finish()
    }
}

/// The SQLite files open in this process, by canonical path.
static OPEN_FILES: LazyLock<Mutex<HashMap<PathBuf, Weak<Core>>>> = LazyLock::new(Mutex::default);

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

    /// Opens (creating it, and its folder, if needed) the archive file at `path`, with the
    /// default [`ArchiveOptions`]. A new file is created readable and writable by its owner
    /// only (mode 0600 on Unix). Opening a file this process already has open returns a handle
    /// on the same connections.
    ///
    /// # Errors
    /// [`ArchiveError`] when the folder or file cannot be created or is not an archive.
    pub fn open(path: impl AsRef<Path>) -> Result<Archive, ArchiveError> {
        Self::open_with(path, &ArchiveOptions::default())
    }

    /// [`Archive::open`] with `options` (the purge key's file; a file already open in this
    /// process keeps the options it was opened with).
    ///
    /// # Errors
    /// As [`Archive::open`].
    pub fn open_with(
        path: impl AsRef<Path>,
        options: &ArchiveOptions,
    ) -> Result<Archive, ArchiveError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(ArchiveError::io("criar a pasta do acervo"))?;
        }
        create_private(path)?;
        let path = path
            .canonicalize()
            .map_err(ArchiveError::io("abrir o arquivo do acervo"))?;
        let mut open = OPEN_FILES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(core) = open.get(&path).and_then(Weak::upgrade)
            && core.pid == std::process::id()
        {
            return Ok(Archive { core });
        }
        let store = sqlite::Sqlite::open(&path)?;
        let core = Core::new(
            Box::new(store),
            Location::File(path.clone(), options.clone()),
            options.purge_key_path(Some(&path)),
        );
        open.retain(|_, c| c.strong_count() > 0);
        open.insert(path, Arc::downgrade(&core));
        Ok(Archive { core })
    }

    /// Opens `location`: a PostgreSQL URL (`postgres://…`, with the feature
    /// `archive-postgres`) or a file path.
    ///
    /// # Errors
    /// As [`Archive::open`] and `Archive::connect`; a PostgreSQL URL without the feature is
    /// refused.
    pub fn open_location(location: &str) -> Result<Archive, ArchiveError> {
        if is_postgres_url(location) {
            #[cfg(feature = "archive-postgres")]
            return Self::connect(location);
            #[cfg(not(feature = "archive-postgres"))]
            return Err(ArchiveError::plain(
                "abrir um acervo PostgreSQL (esta versão foi compilada sem a feature `archive-postgres`)",
            ));
        }
        Self::open(location)
    }

    /// Connects to the team archive in the PostgreSQL database at `url` (feature
    /// `archive-postgres`), creating its tables (`archive_*`) when missing, with the default
    /// [`ArchiveOptions`]. The connection is not encrypted (no TLS in this build): use it on a
    /// trusted network or through a tunnel.
    ///
    /// # Errors
    /// [`ArchiveError`] when the URL is invalid, the database cannot be reached or the tables
    /// cannot be created.
    #[cfg(feature = "archive-postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "archive-postgres")))]
    pub fn connect(url: &str) -> Result<Archive, ArchiveError> {
        Self::connect_with(url, &ArchiveOptions::default())
    }

    /// [`Archive::connect`] with `options`: the pool's size and wait, the purge key's file.
    ///
    /// # Errors
    /// As [`Archive::connect`].
    #[cfg(feature = "archive-postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "archive-postgres")))]
    pub fn connect_with(url: &str, options: &ArchiveOptions) -> Result<Archive, ArchiveError> {
        let pg = postgres::Pg::connect(url, options)?;
        Ok(Archive {
            core: Core::new(
                Box::new(pg),
                Location::Database(url.to_owned(), options.clone()),
                options.purge_key_path(None),
            ),
        })
    }

    /// This archive as this process may use it: the same handle, or, in a child after
    /// `fork()`, the same file or database opened again (the parent's connections and threads
    /// are not the child's).
    pub(crate) fn for_this_process(&self) -> Result<Archive, ArchiveError> {
        if self.core.pid == std::process::id() {
            return Ok(self.clone());
        }
        match &self.core.location {
            Location::File(path, options) => Self::open_with(path, options),
            #[cfg(feature = "archive-postgres")]
            Location::Database(url, options) => Self::connect_with(url, options),
        }
    }

    /// Caps the archive's file at about `bytes` (for every handle of the file in this process):
    /// an answer that would pass it is not archived (the lookup still returns it, with
    /// [`Answer::warning`](crate::Answer::warning)), as on a full disk.
    ///
    /// # Errors
    /// [`ArchiveError`] when the limit cannot be set, or the archive is a PostgreSQL database.
    pub fn with_max_size(self, bytes: u64) -> Result<Archive, ArchiveError> {
        self.core.store.limit_size(bytes)?;
        Ok(self)
    }

    /// The file this archive lives in (canonical); for a PostgreSQL archive, its URL without
    /// the password.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.core.store.location()
    }

    /// True for a PostgreSQL archive (a team's, shared by processes on several machines).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.core.store.is_shared()
    }
}

impl Core {
    fn new(
        store: Box<dyn Store>,
        location: Location,
        purge_key_path: Option<PathBuf>,
    ) -> Arc<Core> {
        Arc::new(Core {
            store,
            flights: Arc::default(),
            location,
            purge_key_path,
            purge_key: Mutex::new(None),
            pid: std::process::id(),
        })
    }

    /// The purge key: read once; created when `create` and missing.
    fn purge_key(&self, create: bool) -> Result<Option<PurgeKey>, ArchiveError> {
        let mut known = self
            .purge_key
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if known.is_none()
            && let Some(path) = &self.purge_key_path
        {
            *known = if create {
                Some(PurgeKey::load_or_create(path)?)
            } else {
                PurgeKey::load(path)?
            };
        }
        Ok(known.clone())
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
