//! Local mode (temporary stub until `carapi_server::spawn` lands).

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::Paths;
use crate::error::{CliError, Result};

/// The in-process reference server and its local account.
#[derive(Debug)]
pub struct Local {
    base_url: String,
    api_key: String,
    key_file: PathBuf,
}

impl Local {
    /// Starts the server over the persistent store.
    ///
    /// # Errors
    /// Always, for now.
    pub async fn iniciar(_paths: &Paths, _bind: Option<SocketAddr>) -> Result<Local> {
        Err(CliError::other("LOCAL", "modo local indisponível"))
    }
    /// Base URL.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }
    /// Key.
    pub fn api_key(&self) -> &str {
        &self.api_key
    }
    /// Key file.
    pub fn key_file(&self) -> PathBuf {
        self.key_file.clone()
    }
    /// Pays a top-up.
    ///
    /// # Errors
    /// Always, for now.
    pub async fn pagar(&self, _id: uuid::Uuid) -> Result<()> {
        Err(CliError::other("LOCAL", "modo local indisponível"))
    }
    /// Stops.
    pub async fn encerrar(self) {}
}
