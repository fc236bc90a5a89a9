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
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(3);

const SERVICE: &str = "carapi";
const USER: &str = "api-key";

/// Where a key came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fonte {
    /// `CARAPI_API_KEY`.
    Ambiente,
    /// The OS keyring.
    Chaveiro,
    /// The 0600 file at this path.
    Arquivo(PathBuf),
    /// The local mode's account (`<data dir>/local/api-key`).
    Local(PathBuf),
}

impl std::fmt::Display for Fonte {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fonte::Ambiente => f.write_str("variável CARAPI_API_KEY"),
            Fonte::Chaveiro => f.write_str("chaveiro do sistema"),
            Fonte::Arquivo(p) => write!(f, "arquivo {}", p.display()),
            Fonte::Local(p) => write!(f, "conta local ({})", p.display()),
        }
    }
}

/// A key and its source. `Debug` never shows the key.
#[derive(Clone)]
pub struct Credencial {
    /// The key itself.
    pub key: String,
    /// Where it came from.
    pub fonte: Fonte,
}

impl std::fmt::Debug for Credencial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credencial")
            .field("chave", &"<oculta>")
            .field("fonte", &self.fonte)
            .finish()
    }
}

/// Why the keyring was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indisponivel {
    /// `CARAPI_KEYRING=off`.
    Desligado,
    /// The call did not answer within [`KEYRING_TIMEOUT`].
    TempoEsgotado,
    /// The platform store failed (no Secret Service, locked, unsupported platform).
    Falha(String),
}

impl std::fmt::Display for Indisponivel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Indisponivel::Desligado => f.write_str("CARAPI_KEYRING=off"),
            Indisponivel::TempoEsgotado => {
                write!(f, "sem resposta em {}s", KEYRING_TIMEOUT.as_secs())
            }
            Indisponivel::Falha(m) => f.write_str(m),
        }
    }
}

/// Where `login` stored the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Salvo {
    /// In the OS keyring.
    Chaveiro,
    /// In the 0600 file, because the keyring is unavailable.
    Arquivo(PathBuf, Indisponivel),
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
) -> std::result::Result<keyring::Result<T>, Indisponivel> {
    if keyring_disabled() {
        return Err(Indisponivel::Desligado);
    }
    if !cfg!(any(
        target_os = "linux",
        target_os = "macos",
        target_os = "windows"
    )) {
        // keyring's default store elsewhere is an in-memory mock: it would lose the key.
        return Err(Indisponivel::Falha(
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
        .map_err(|e| Indisponivel::Falha(crate::foreign_errors::io(&e)))?;
    match rx.recv_timeout(KEYRING_TIMEOUT) {
        Ok(Err(e @ (keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_)))) => {
            Err(falha(&e))
        }
        Ok(r) => Ok(r),
        Err(_) => Err(Indisponivel::TempoEsgotado),
    }
}

/// A keyring failure in Portuguese ([`crate::foreign_errors::keyring`]); the crate's own text
/// goes to the debug log (`-vv`).
fn falha(e: &keyring::Error) -> Indisponivel {
    tracing::debug!("chaveiro: {e}");
    Indisponivel::Falha(crate::foreign_errors::keyring(e))
}

/// Finds the key: `CARAPI_API_KEY`, keyring, file. `Ok(None)` when there is none.
///
/// # Errors
/// When the credentials file exists but cannot be read.
pub fn resolver(paths: &Paths) -> Result<Option<Credencial>> {
    if let Some(key) = std::env::var("CARAPI_API_KEY")
        .ok()
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
    {
        return Ok(Some(Credencial {
            key,
            fonte: Fonte::Ambiente,
        }));
    }
    if let Ok(Ok(key)) = with_keyring(|e| e.get_password()) {
        let key = key.trim().to_owned();
        if !key.is_empty() {
            return Ok(Some(Credencial {
                key,
                fonte: Fonte::Chaveiro,
            }));
        }
    }
    let path = paths.credentials_file();
    match std::fs::read_to_string(&path) {
        Ok(s) if !s.trim().is_empty() => Ok(Some(Credencial {
            key: s.trim().to_owned(),
            fonte: Fonte::Arquivo(path),
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
pub fn salvar(paths: &Paths, key: &str) -> Result<Salvo> {
    let owned = key.to_owned();
    match with_keyring(move |e| e.set_password(&owned)) {
        Ok(Ok(())) => {
            // A stale fallback file would shadow nothing (keyring comes first) but keeps an old key
            // on disk: remove it.
            let _ = std::fs::remove_file(paths.credentials_file());
            Ok(Salvo::Chaveiro)
        }
        Ok(Err(e)) => salvar_arquivo(paths, key, falha(&e)),
        Err(why) => salvar_arquivo(paths, key, why),
    }
}

fn salvar_arquivo(paths: &Paths, key: &str, why: Indisponivel) -> Result<Salvo> {
    let path = paths.credentials_file();
    write_private(&path, format!("{key}\n").as_bytes())?;
    Ok(Salvo::Arquivo(path, why))
}

/// Removes the key from the keyring and the file. Returns where something was removed.
///
/// # Errors
/// When the file exists but cannot be removed.
pub fn remover(paths: &Paths) -> Result<Vec<Fonte>> {
    let mut removed = vec![];
    if let Ok(Ok(())) = with_keyring(|e| e.delete_credential()) {
        removed.push(Fonte::Chaveiro);
    }
    let path = paths.credentials_file();
    match std::fs::remove_file(&path) {
        Ok(()) => removed.push(Fonte::Arquivo(path)),
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
        let c = Credencial {
            key: "segredo-123".into(),
            fonte: Fonte::Ambiente,
        };
        assert!(!format!("{c:?}").contains("segredo"));
    }
}
