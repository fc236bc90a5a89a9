//! [`ArchiveOptions`]: the settings of an archive besides its location.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Settings of an archive ([`Archive::open_with`](super::Archive::open_with),
/// [`Archive::connect_with`](super::Archive::connect_with)); [`ArchiveOptions::default`] is what
/// [`Archive::open`](super::Archive::open) and `Archive::connect` use.
///
/// ```
/// use std::time::Duration;
/// use carapi_sdk::archive::ArchiveOptions;
/// let o = ArchiveOptions::default()
///     .max_connections(32)
///     .acquire_timeout(Duration::from_secs(5));
/// assert_eq!(o.max_connections_value(), 32);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveOptions {
    max_connections: u32,
    acquire_timeout: Duration,
    purge_key_file: Option<PathBuf>,
}

impl Default for ArchiveOptions {
    /// 16 pooled connections, a wait of 30 s for one, the purge key at its default place.
    fn default() -> Self {
        Self {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(30),
            purge_key_file: None,
        }
    }
}

impl ArchiveOptions {
    /// The most connections a PostgreSQL archive keeps open (default 16, at least 1). A
    /// lookup holds one only while it reads, and a purchase while its claim and append last
    /// (the rate limiter's wait comes before the claim), so a burst of many keys needs few.
    /// Ignored by a SQLite archive (one reader and one writer per process).
    #[must_use]
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long a PostgreSQL archive's lookup waits for a free pooled connection before it
    /// fails with [`ArchiveErrorKind::PoolTimeout`](super::ArchiveErrorKind::PoolTimeout)
    /// (retryable: nothing was sent). Default 30 s.
    #[must_use]
    pub fn acquire_timeout(mut self, wait: Duration) -> Self {
        self.acquire_timeout = wait;
        self
    }

    /// The file of the key that tags purged documents (see "The LGPD" in the
    /// [module docs](super)). Default: beside a SQLite archive, `<file>-expurgos.chave`; for a
    /// PostgreSQL archive, `acervo-expurgos.chave` in the user's configuration directory, a
    /// file every process of the team must share to recognise each other's purges.
    #[must_use]
    pub fn purge_key_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.purge_key_file = Some(path.into());
        self
    }

    /// The configured pool size.
    #[must_use]
    pub fn max_connections_value(&self) -> u32 {
        self.max_connections
    }

    /// The configured wait for a pooled connection.
    #[must_use]
    pub fn acquire_timeout_value(&self) -> Duration {
        self.acquire_timeout
    }

    /// The purge key's file for an archive at `file` (SQLite) or of a database (`None`).
    pub(crate) fn purge_key_path(&self, file: Option<&Path>) -> Option<PathBuf> {
        if let Some(p) = &self.purge_key_file {
            return Some(p.clone());
        }
        match file {
            Some(f) => {
                let mut name = f.as_os_str().to_owned();
                name.push("-expurgos.chave");
                Some(PathBuf::from(name))
            }
            None => directories::ProjectDirs::from("br", "carapi", "carapi")
                .map(|d| d.config_dir().join("acervo-expurgos.chave")),
        }
    }
}
