//! The lock of a batch's output: one run at a time per `--saida`, so two runs of one batch never
//! buy the same keys twice.
//!
//! The protocol (the Python package's `lote(saida=...)` follows it too):
//!
//! - the lock file is `.<name>.trava` in the directory of `--saida FILE` (`FILE` = `name`);
//!   it is created when missing and never removed;
//! - a run takes an exclusive, non-blocking OS lock on the whole file (`flock(LOCK_EX |
//!   LOCK_NB)` on Unix, `LockFileEx` on Windows: Rust's `File::try_lock`, Python's
//!   `fcntl.flock`) before it reads the output or sends any request, and holds it until it
//!   exits; the OS releases it when the process ends, however it ends (`kill -9` included), so
//!   a killed run never leaves it held;
//! - once locked, the run replaces the file's contents with its process id in decimal and a
//!   newline (`12345\n`); a run that finds the lock held reads that id to name the other run,
//!   and stops at once (nothing read, nothing sent, nothing charged).
//!
//! The id says who holds the lock only while the lock is held: a file left by a finished run
//! still holds its id, and means nothing.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};

/// The lock file of an output: `dir/.<name>.trava`.
pub(crate) fn lock_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}.trava"))
}

/// The lock of one output, held until dropped (or the process ends).
#[derive(Debug)]
pub(crate) struct OutputLock {
    /// The locked file: the lock lives as long as it is open.
    _file: File,
}

/// Takes the lock of `output` (see the module documentation).
///
/// # Errors
/// Another run holds it (exit 1, `SAIDA_EM_USO`, naming its process id); the lock file cannot
/// be opened or written (1).
pub(crate) fn acquire(output: &Path) -> Result<OutputLock> {
    let path = lock_path(output);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| CliError::io_at(&path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(busy(output, &mut file)),
        Err(std::fs::TryLockError::Error(e)) => return Err(CliError::io_at(&path, e)),
    }
    let written = (|| {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        writeln!(file, "{}", std::process::id())?;
        file.flush()
    })();
    written.map_err(|e| CliError::io_at(&path, e))?;
    Ok(OutputLock { _file: file })
}

/// The error of a lock held by another run: its process id, as its lock file says.
fn busy(output: &Path, file: &mut File) -> CliError {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    let who = match text.trim().parse::<u32>() {
        Ok(pid) => format!("outra execução do carapi (PID {pid})"),
        Err(_) => "outra execução do carapi".to_owned(),
    };
    CliError::other(
        "SAIDA_EM_USO",
        format!(
            "{who} está usando {}; nada foi consultado nem cobrado",
            output.display()
        ),
    )
    .hint("espere a outra execução terminar e rode de novo (ela retoma o lote), ou use outro arquivo em --saida")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_names_the_first_holder_and_a_released_one_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("r.csv");
        assert_eq!(lock_path(&output).file_name().unwrap(), ".r.csv.trava");
        let first = acquire(&output).unwrap();
        let text = std::fs::read_to_string(lock_path(&output)).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
        let e = acquire(&output).unwrap_err();
        assert_eq!(e.code, "SAIDA_EM_USO");
        assert!(
            e.message.contains(&format!("(PID {})", std::process::id())),
            "{}",
            e.message
        );
        drop(first);
        acquire(&output).unwrap();
    }
}
