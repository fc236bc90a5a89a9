//! The API key: where it comes from and where `carapi login` keeps it.
//!
//! Order: `CARAPI_API_KEY`, then the OS keyring (service `carapi`, user
//! `api-key`), then the file `<config dir>/credentials` (mode 0600), which is written only when no
//! keyring works (the CLI says so, with its path). Every keyring call runs on its own thread with a
//! timeout ([`KEYRING_TIMEOUT`]), so a Linux machine without a Secret Service (or a locked one
//! that would prompt forever) fails fast, as gh's `internal/keyring` does.
//! `CARAPI_KEYRING=off` skips the keyring (headless machines, CI).
//!
//! The key is never printed, never logged and never needs to be on the command line.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crate::config::{Paths, write_private};
use crate::error::{CliError, Result};

/// How long a keyring call may take before the file fallback is used.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);

const SERVICE: &str = "carapi";
const USER: &str = "api-key";

/// Where a key came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// `CARAPI_API_KEY`.
    Env,
    /// The OS keyring.
    Keyring,
    /// The 0600 file at this path.
    File(PathBuf),
    /// The local mode's account (`<data dir>/local/api-key`).
    #[cfg(feature = "local")]
    Local(PathBuf),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Env => f.write_str("variável CARAPI_API_KEY"),
            KeySource::Keyring => f.write_str("chaveiro do sistema"),
            KeySource::File(p) => write!(f, "arquivo {}", p.display()),
            #[cfg(feature = "local")]
            KeySource::Local(p) => write!(f, "conta local ({})", p.display()),
        }
    }
}

/// A key and its source. `Debug` never shows the key.
#[derive(Clone)]
pub(crate) struct Credential {
    /// The key itself.
    pub(crate) key: String,
    /// Where it came from.
    pub(crate) source: KeySource,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credencial")
            .field("chave", &"<oculta>")
            .field("fonte", &self.source)
            .finish()
    }
}

/// Why the keyring was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// `CARAPI_KEYRING=off`.
    Disabled,
    /// The call did not answer within [`KEYRING_TIMEOUT`].
    TimedOut,
    /// The platform store failed (no Secret Service, locked, unsupported platform).
    Failure(String),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::Disabled => f.write_str("CARAPI_KEYRING=off"),
            Unavailable::TimedOut => {
                write!(f, "sem resposta em {}s", KEYRING_TIMEOUT.as_secs())
            }
            Unavailable::Failure(m) => f.write_str(m),
        }
    }
}

/// Where `login` stored the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stored {
    /// In the OS keyring.
    Keyring,
    /// In the 0600 file, because the keyring is unavailable.
    File(PathBuf, Unavailable),
}

fn keyring_disabled() -> bool {
    std::env::var("CARAPI_KEYRING").is_ok_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    })
}

/// Runs one keyring operation on a thread, with the timeout.
fn with_keyring<T: Send + 'static>(
    op: impl FnOnce(&keyring::Entry) -> keyring::Result<T> + Send + 'static,
) -> std::result::Result<keyring::Result<T>, Unavailable> {
    if keyring_disabled() {
        return Err(Unavailable::Disabled);
    }
    if !cfg!(any(
        target_os = "linux",
        target_os = "macos",
        target_os = "windows"
    )) {
        // keyring's default store elsewhere is an in-memory mock: it would lose the key.
        return Err(Unavailable::Failure(
            "plataforma sem chaveiro suportado".into(),
        ));
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("carapi-keyring".into())
        .spawn(move || {
            let r = keyring::Entry::new(SERVICE, USER).and_then(|e| op(&e));
            let _ = tx.send(r);
        })
        .map_err(|e| Unavailable::Failure(crate::foreign_errors::io(&e)))?;
    match rx.recv_timeout(KEYRING_TIMEOUT) {
        Ok(Err(e @ (keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_)))) => {
            Err(keyring_failure(&e))
        }
        Ok(r) => Ok(r),
        Err(_) => Err(Unavailable::TimedOut),
    }
}

/// A keyring failure in Portuguese ([`crate::foreign_errors::keyring`]); the crate's own text
/// goes to the debug log (`-vv`).
fn keyring_failure(e: &keyring::Error) -> Unavailable {
    tracing::debug!("chaveiro: {e}");
    Unavailable::Failure(crate::foreign_errors::keyring(e))
}

/// Finds the key: `CARAPI_API_KEY`, keyring, file. `Ok(None)` when there is none.
///
/// # Errors
/// When the credentials file exists but cannot be read.
pub(crate) fn resolve(paths: &Paths) -> Result<Option<Credential>> {
    if let Some(key) = std::env::var("CARAPI_API_KEY")
        .ok()
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
    {
        return Ok(Some(Credential {
            key,
            source: KeySource::Env,
        }));
    }
    if let Ok(Ok(key)) = with_keyring(|e| e.get_password()) {
        let key = key.trim().to_owned();
        if !key.is_empty() {
            return Ok(Some(Credential {
                key,
                source: KeySource::Keyring,
            }));
        }
    }
    let path = paths.credentials_file();
    match std::fs::read_to_string(&path) {
        Ok(s) if !s.trim().is_empty() => Ok(Some(Credential {
            key: s.trim().to_owned(),
            source: KeySource::File(path),
        })),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::io_at(&path, e)),
    }
}

/// Stores the key: keyring when it works, else the 0600 file.
///
/// # Errors
/// When neither the keyring nor the file can be written.
pub(crate) fn store(paths: &Paths, key: &str) -> Result<Stored> {
    let owned = key.to_owned();
    match with_keyring(move |e| e.set_password(&owned)) {
        Ok(Ok(())) => {
            // A stale fallback file would shadow nothing (keyring comes first) but keeps an old key
            // on disk: remove it.
            let _ = std::fs::remove_file(paths.credentials_file());
            Ok(Stored::Keyring)
        }
        Ok(Err(e)) => store_in_file(paths, key, keyring_failure(&e)),
        Err(why) => store_in_file(paths, key, why),
    }
}

fn store_in_file(paths: &Paths, key: &str, why: Unavailable) -> Result<Stored> {
    let path = paths.credentials_file();
    write_private(&path, format!("{key}\n").as_bytes())?;
    Ok(Stored::File(path, why))
}

/// Removes the key from the keyring and the file. Returns where something was removed.
///
/// # Errors
/// When the file exists but cannot be removed.
pub(crate) fn remove(paths: &Paths) -> Result<Vec<KeySource>> {
    let mut removed = vec![];
    if let Ok(Ok(())) = with_keyring(|e| e.delete_credential()) {
        removed.push(KeySource::Keyring);
    }
    let path = paths.credentials_file();
    match std::fs::remove_file(&path) {
        Ok(()) => removed.push(KeySource::File(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CliError::io_at(&path, e)),
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_key() {
        let c = Credential {
            key: "segredo-123".into(),
            source: KeySource::Env,
        };
        assert!(!format!("{c:?}").contains("segredo"));
    }
}
