//! The port's error: what happened to a storage operation, not which driver said it.

use std::fmt;

/// A storage failure, said as what happened, not which driver said it. Handlers turn it into
/// 500 `ERRO_INTERNO` (503 for [`StoreError::Unavailable`]) and log the detail.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached in time (no connection within the store's wait):
    /// nothing was read or written, and the operation can be retried.
    #[error("database unavailable: {0}")]
    Unavailable(#[source] DriverError),
    /// The database failed or refused the operation.
    #[error("database: {0}")]
    Database(#[source] DriverError),
    /// Migrations failed.
    #[error("migrations: {0}")]
    Migration(#[source] DriverError),
    /// The database is missing where it may not be created, or its schema is not this
    /// binary's (newer, or older where it may not be migrated): the Portuguese message says
    /// which and what to do.
    #[error("{0}")]
    Schema(String),
    /// The SQLite lookup writer could not commit the group this request was part of (nothing
    /// of the group was written).
    #[error("database: group commit failed: {0}")]
    GroupCommit(String),
    /// The SQLite lookup writer thread is gone (store closed or thread not started).
    #[error("database writer stopped")]
    WriterStopped,
    /// A stored value could not be read back (corrupt or foreign data).
    #[error("stored value unreadable: {0}")]
    Corrupt(String),
    /// The reply of a commit was lost (the database connection dropped after the `COMMIT` was
    /// sent, or the SQLite writer's reply never came) and whether it committed is not known
    /// yet: [`ConsultasStore::cobranca_outcome`](super::ConsultasStore::cobranca_outcome) tells.
    #[error("database: commit outcome unknown: {0}")]
    ReplyLost(String),
}

/// The driver's own error behind a [`StoreError`] (for the log and `source()`), without naming
/// the driver in the port.
pub(crate) type DriverError = Box<dyn std::error::Error + Send + Sync>;

impl From<sqlx::Error> for StoreError {
    /// A pool that gave no connection in time is [`StoreError::Unavailable`]; anything else
    /// [`StoreError::Database`].
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::PoolTimedOut => {
                crate::metrics::pool_timed_out();
                StoreError::Unavailable(Box::new(e))
            }
            e => StoreError::Database(Box::new(e)),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migration(Box::new(e))
    }
}

impl From<crate::money::Overflow> for StoreError {
    /// A stored amount that cannot be summed is corrupt data.
    fn from(e: crate::money::Overflow) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(Box::new(e))
    }
}

impl StoreError {
    /// True when the operation may have been committed although it failed
    /// ([`StoreError::ReplyLost`]).
    pub(crate) fn uncertain_outcome(&self) -> bool {
        matches!(self, StoreError::ReplyLost(_))
    }

    /// The error of a commit whose reply was lost (`commit`) and whose outcome could not be
    /// learned either (`busca`).
    pub(crate) fn unknown_outcome(commit: &impl fmt::Display, busca: &StoreError) -> StoreError {
        StoreError::ReplyLost(format!("{commit}; lookup failed: {busca}"))
    }
}
