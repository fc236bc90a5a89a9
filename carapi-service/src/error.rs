//! The error of the library API ([`ServerError`]), shared by the operations that the command
//! line, the test double and other crates call.

use crate::store::StoreError;

/// Errors of the library API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Binding or another I/O operation failed.
    #[error("E/S: {0}")]
    Io(#[from] std::io::Error),
    /// Invalid input to the library API (e.g. a negative initial balance).
    #[error("entrada inválida: {0}")]
    Invalid(String),
    /// The payment, top-up or account does not exist.
    #[error("não encontrado: {0}")]
    NotFound(String),
    /// Delivering the webhook failed.
    #[error("webhook: {0}")]
    Webhook(String),
    /// Reading data to import failed.
    #[error("importação: {0}")]
    Import(String),
}
