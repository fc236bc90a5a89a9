//! The database files are private to the server's user: they hold API key hashes, the webhook
//! secret, CPFs and e-mails. SQLite creates a database with mode `0644 & !umask` and gives its
//! `-wal` and `-shm` files the main file's mode, so the store creates the main file `0600`
//! before SQLite opens it, and narrows the mode of files an older version left readable.

use std::io;
use std::path::{Path, PathBuf};

/// The files SQLite keeps beside a database: the main file, its write-ahead log, its shared
/// memory index and a rollback journal.
const SUFFIXES: [&str; 4] = ["", "-wal", "-shm", "-journal"];

/// Creates `caminho` empty with mode `0600` when it does not exist, and sets `0600` on it and
/// on every companion file of [`SUFFIXES`] that exists. Does nothing off Unix.
///
/// # Errors
/// The [`io::Error`] of creating the file or changing a mode (a file owned by another user).
pub(crate) fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        for file in SUFFIXES.map(|s| with_suffix(path, s)) {
            match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                r => r?,
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, SUFFIXES);
    Ok(())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
