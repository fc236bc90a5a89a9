//! [`ConstrutorTeste`]: how a [`ServidorTeste`] starts.

use std::num::NonZeroU32;

use crate::ServidorTeste;
use crate::modo_teste::{ConfigTeste, montagem};
use carapi_service::ServerError;
use carapi_service::config::Config;

/// Options of a [`ServidorTeste`]: database, rate limit, `/_teste` token, and any other
/// [`Config`] field.
#[derive(Debug, Clone)]
#[must_use = "nothing starts until `iniciar().await`"]
pub struct ConstrutorTeste {
    config: Config,
    teste: ConfigTeste,
}

impl Default for ConstrutorTeste {
    /// In-memory SQLite, bundled records, the contract's rate limit, `127.0.0.1:0`.
    fn default() -> Self {
        ConstrutorTeste {
            config: Config::local("sqlite::memory:"),
            teste: ConfigTeste::default(),
        }
    }
}

impl ConstrutorTeste {
    /// Another database (`postgres://...` for the PostgreSQL store; accounts are created per
    /// test, so tests may share one database).
    pub fn banco(mut self, url: impl Into<String>) -> Self {
        self.config.database_url = url.into();
        self
    }

    /// Requests per second per key; `None` turns the limiter off.
    pub fn limite_taxa(mut self, por_segundo: Option<u32>) -> Self {
        self.config.rate_limit = por_segundo.and_then(NonZeroU32::new);
        self
    }

    /// Opens the `/_teste` HTTP routes with this bearer token (closed by default); at least 32
    /// characters, else [`ServidorTeste`]'s start fails with [`ServerError::Invalido`].
    pub fn token_http(mut self, token: impl Into<String>) -> Self {
        self.teste.token = Some(token.into());
        self
    }

    /// Changes any other field of the server's [`Config`] (the test mode stays on).
    pub fn config(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(&mut self.config);
        self
    }

    /// Starts the server.
    ///
    /// # Errors
    /// [`ServerError::Store`] when the database cannot be opened; [`ServerError::Io`] when the
    /// address cannot be bound.
    pub async fn iniciar(self) -> Result<ServidorTeste, ServerError> {
        let (servidor, teste) = montagem::iniciar(self.config, &self.teste).await?;
        Ok(ServidorTeste { servidor, teste })
    }
}
