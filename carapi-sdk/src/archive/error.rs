//! [`ArchiveError`] and the kinds a caller can match ([`ArchiveErrorKind`]).

use std::fmt;

use chrono::{DateTime, Utc};

/// What went wrong with the archive, as a caller can act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveErrorKind {
    /// The archive ran out of room: the disk, the database's, or
    /// [`Archive::with_max_size`](super::Archive::with_max_size).
    Full,
    /// An entry's record or content no longer matches its hashes (edited after it was
    /// written): it is not served. [`ArchiveError::seq`] names it.
    Tampered,
    /// The archive could not be reached or opened (the database away, the file locked or
    /// unreadable); nothing was sent. Worth retrying.
    Unavailable,
    /// Every pooled connection of a PostgreSQL archive stayed busy past its wait
    /// ([`ArchiveOptions::acquire_timeout`](super::ArchiveOptions::acquire_timeout)); nothing was
    /// sent. Worth retrying.
    PoolTimeout,
    /// The owner lookup's document was purged from the archive at its owner's request (LGPD
    /// art. 18, VI): not bought again unless the caller says so
    /// ([`Client::with_purged_allowed`](crate::Client::with_purged_allowed)).
    Purged,
    /// Anything else (a stored value unreadable, a query refused).
    Other,
}

impl ArchiveErrorKind {
    /// True when trying again may succeed and nothing was sent: [`ArchiveErrorKind::Unavailable`]
    /// and [`ArchiveErrorKind::PoolTimeout`].
    #[must_use]
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Unavailable | Self::PoolTimeout)
    }
}

/// An archive operation failed (the file cannot be opened or written, the disk is full, an
/// entry was altered, a stored value is unreadable). Its text never holds a key, code or
/// document; [`ArchiveError::kind`] says what kind of failure it is.
#[derive(Debug)]
pub struct ArchiveError {
    kind: ArchiveErrorKind,
    what: &'static str,
    /// The altered entry ([`ArchiveErrorKind::Tampered`]).
    seq: Option<u64>,
    /// When the document was purged ([`ArchiveErrorKind::Purged`]).
    purged_at: Option<DateTime<Utc>>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl ArchiveError {
    /// `what` failed, of `kind`, because of `source`.
    pub(crate) fn new(
        kind: ArchiveErrorKind,
        what: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            kind,
            what,
            seq: None,
            purged_at: None,
            source: Some(source.into()),
        }
    }

    /// `what` failed, with no cause to tell.
    pub(crate) fn plain(what: &'static str) -> Self {
        Self {
            kind: ArchiveErrorKind::Other,
            what,
            seq: None,
            purged_at: None,
            source: None,
        }
    }

    /// Entry `seq` was altered after it was written.
    pub(crate) fn tampered(seq: u64) -> Self {
        Self {
            seq: Some(seq),
            ..Self::plain("servir a resposta arquivada")
        }
        .of_kind(ArchiveErrorKind::Tampered)
    }

    /// The document was purged at `at`.
    pub(crate) fn purged(at: DateTime<Utc>) -> Self {
        Self {
            purged_at: Some(at),
            ..Self::plain("consultar o documento")
        }
        .of_kind(ArchiveErrorKind::Purged)
    }

    /// The archive's schema is `found`, newer than the `known` this version writes: refused
    /// rather than written by a writer that does not know all its tables (ARCHITECTURE.md,
    /// the archive's schema).
    pub(crate) fn newer_schema(found: i64, known: i64) -> Self {
        Self::new(
            ArchiveErrorKind::Other,
            "abrir um acervo de uma versão mais nova do carapi",
            format!("esquema {found}; esta versão conhece até o {known}: atualize o carapi"),
        )
    }

    /// The same error, of `kind`.
    pub(crate) fn of_kind(mut self, kind: ArchiveErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// A SQLite failure of `what`, classified (full, locked, other).
    pub(crate) fn sqlite(what: &'static str) -> impl Fn(rusqlite::Error) -> ArchiveError {
        move |e| {
            let kind = match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::DiskFull) => ArchiveErrorKind::Full,
                Some(
                    rusqlite::ErrorCode::DatabaseBusy
                    | rusqlite::ErrorCode::DatabaseLocked
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::PermissionDenied,
                ) => ArchiveErrorKind::Unavailable,
                _ => ArchiveErrorKind::Other,
            };
            ArchiveError::new(kind, what, e)
        }
    }

    /// An I/O failure of `what`.
    pub(crate) fn io(what: &'static str) -> impl Fn(std::io::Error) -> ArchiveError {
        move |e| {
            let kind = if e.kind() == std::io::ErrorKind::StorageFull {
                ArchiveErrorKind::Full
            } else {
                ArchiveErrorKind::Unavailable
            };
            ArchiveError::new(kind, what, e)
        }
    }

    /// What kind of failure this is.
    #[must_use]
    pub fn kind(&self) -> ArchiveErrorKind {
        self.kind
    }

    /// True when the archive ran out of room ([`ArchiveErrorKind::Full`]).
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.kind == ArchiveErrorKind::Full
    }

    /// The altered entry, for [`ArchiveErrorKind::Tampered`].
    #[must_use]
    pub fn seq(&self) -> Option<u64> {
        self.seq
    }

    /// When the document was purged, for [`ArchiveErrorKind::Purged`].
    #[must_use]
    pub fn purged_at(&self) -> Option<DateTime<Utc>> {
        self.purged_at
    }
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, self.seq, self.purged_at) {
            (ArchiveErrorKind::Tampered, Some(seq), _) => write!(
                f,
                "acervo: a entrada {seq} foi alterada depois de gravada (seus hashes não conferem): \
                 não é servida e nada foi comprado; confira o acervo (verificar) e, para comprar de \
                 novo, peça uma compra explícita"
            ),
            (ArchiveErrorKind::Purged, _, Some(at)) => write!(
                f,
                "acervo: o titular deste documento pediu a eliminação dos seus dados (expurgo de {}): \
                 nada foi enviado; para consultá-lo mesmo assim, autorize explicitamente",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
            (ArchiveErrorKind::PoolTimeout, ..) => write!(
                f,
                "acervo: nenhuma conexão livre para {} (nada foi enviado; tente de novo)",
                self.what
            ),
            _ => write!(f, "acervo: não foi possível {}", self.what),
        }
    }
}

impl std::error::Error for ArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
