//! [`TestServerBuilder`]: how a [`TestServer`] starts.

use std::num::NonZeroU32;

use crate::TestServer;
use crate::test_mode::{TestModeConfig, assembly};
use carapi_service::ServerError;
use carapi_service::config::Config;

/// Options of a [`TestServer`]: database, rate limit, `/_teste` token, and any other
/// [`Config`] field.
#[derive(Debug, Clone)]
#[must_use = "nothing starts until `iniciar().await`"]
pub struct TestServerBuilder {
    config: Config,
    test: TestModeConfig,
}

impl Default for TestServerBuilder {
    /// In-memory SQLite, bundled records, the contract's rate limit, `127.0.0.1:0`.
    fn default() -> Self {
        TestServerBuilder {
            config: Config::local("sqlite::memory:"),
            test: TestModeConfig::default(),
        }
    }
}

impl TestServerBuilder {
    /// Another database (`postgres://...` for the PostgreSQL store; accounts are created per
    /// test, so tests may share one database).
    pub fn database(mut self, url: impl Into<String>) -> Self {
        self.config.database_url = url.into();
        self
    }

    /// Requests per second per key; `None` turns the limiter off.
    pub fn rate_limit(mut self, per_second: Option<u32>) -> Self {
        self.config.rate_limit = per_second.and_then(NonZeroU32::new);
        self
    }

    /// Opens the `/_teste` HTTP routes with this bearer token (closed by default); at least 32
    /// characters, else [`TestServer`]'s start fails with [`ServerError::Invalid`].
    pub fn token_http(mut self, token: impl Into<String>) -> Self {
        self.test.token = Some(token.into());
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
    pub async fn start(self) -> Result<TestServer, ServerError> {
        let (server, test) = assembly::start(self.config, &self.test).await?;
        Ok(TestServer { server, test })
    }
}
