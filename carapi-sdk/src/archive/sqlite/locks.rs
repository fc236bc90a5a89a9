//! The archive file's locks across processes: byte-range locks (POSIX `fcntl`, Windows
//! `LockFileEx`, through `file-guard`) on a file beside the archive, `<file>-travas`, which the
//! kernel releases when their process dies (no lease a slow purchase could outlive). Byte 0 is
//! held while a process opens the archive (its schema created or updated); the byte at an offset
//! derived from a key's hash is held by a purchase of that key until its entry commits, so a
//! second process looking the key up at the same time waits for it and then reads the archive.
//!
//! The locks are per process (two handles of one process share them): one process's lookups of
//! one key are kept apart by its flights (`flights.rs`), not here. The file is opened once per
//! process and archive and never closed while a lock is held (closing any handle of a file
//! releases a process's POSIX locks on it).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use file_guard::{FileGuard, Lock};
use sha2::{Digest, Sha256};

use crate::EndpointConsulta;
use crate::archive::ArchiveError;

/// Keys' offsets start here (byte 0 is the open lock).
const FIRST_KEY: u64 = 1;
/// How many distinct offsets the keys spread over (two keys sharing one wait for each other,
/// across processes only: harmless).
const KEY_SPACE: u64 = 1 << 40;

/// The locks file of one archive file, opened once in this process.
#[derive(Debug, Clone)]
pub(crate) struct Locks {
    file: Arc<File>,
}

/// A held lock: released when dropped.
pub(crate) type Held = FileGuard<Arc<File>>;

impl Locks {
    /// The locks file beside `archive` (created, mode 0600).
    pub(crate) fn open(archive: &Path) -> Result<Locks, ArchiveError> {
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let file = opts
            .open(path_of(archive))
            .map_err(ArchiveError::io("abrir as travas do acervo"))?;
        Ok(Locks {
            file: Arc::new(file),
        })
    }

    /// Holds the open lock, waiting for another process's open to end.
    pub(crate) fn opening(&self) -> Result<Held, ArchiveError> {
        file_guard::lock(Arc::clone(&self.file), Lock::Exclusive, 0, 1)
            .map_err(ArchiveError::io("travar a abertura do acervo"))
    }

    /// Holds `consulta` + `chave`'s lock, waiting (asleep, polling: another process buys the key
    /// for a few milliseconds at most, rarely) while another process holds it. Cancel-safe.
    pub(crate) async fn purchase(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> Result<Held, ArchiveError> {
        let offset = usize::try_from(offset_of(consulta, chave)).unwrap_or(usize::MAX);
        let mut pause = Duration::from_millis(1);
        loop {
            match file_guard::try_lock(Arc::clone(&self.file), Lock::Exclusive, offset, 1) {
                Ok(held) => return Ok(held),
                // Held by another process: EAGAIN, or EACCES on some systems.
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::PermissionDenied
                    ) =>
                {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Err(e) => return Err(ArchiveError::io("travar a compra no acervo")(e)),
            }
        }
    }
}

/// `<archive>-travas`.
fn path_of(archive: &Path) -> PathBuf {
    let mut name = archive.as_os_str().to_owned();
    name.push("-travas");
    PathBuf::from(name)
}

/// The byte of a key: from the first 8 bytes of a SHA-256 (as the PostgreSQL archive's lock).
fn offset_of(consulta: EndpointConsulta, chave: &str) -> u64 {
    let d =
        Sha256::digest(format!("carapi-acervo-compra\n{}\n{chave}", consulta.name()).as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    FIRST_KEY + u64::from_be_bytes(b) % KEY_SPACE
}
