//! The upkeep of the SQLite store's write-ahead log, off the lookup writer's path.
//!
//! Every charge appends its pages to the WAL (about 20 KB per lookup under load), so the WAL
//! has to be copied back into the database file (a checkpoint) and started over from its
//! beginning (a restart) all the time. SQLite's default does both inside the committing
//! connection once the WAL passes a size, `fsync`s included: the lookup writer then stalled
//! for 5 to 25 ms several times a second, and every request queued behind it waited too.
//! Here:
//!
//! - a thread of its own checkpoints every [`INTERVAL`] in `PASSIVE` mode, which never waits
//!   for, nor blocks, readers or the writer;
//! - once the WAL holds [`RESTART_FRAMES`] frames, it catches up in `PASSIVE` rounds until
//!   little is left, then asks for a `RESTART`: that one holds the writer back while it copies
//!   the last frames and waits for the readers still on the log, so it runs when there is
//!   little to copy, and waits for readers at most about [`READERS_WAIT_MS`] ms (else it is
//!   tried again at the next pass). It still holds the writer back for its two `fsync`s
//!   (about 10 ms here), a few times a second under a saturating load: what the writer's
//!   group commit ([`super::writer`]) keeps rare by writing fewer pages per charge;
//! - the writer checkpoints by itself only past [`EMERGENCY_FRAMES`] frames, a backstop;
//! - the writer and this thread wait for a lock in steps of 50 µs to 2 ms ([`wait_for_lock`])
//!   instead of SQLite's 1, 2, 5, 10, 15 ... 100 ms, so that a lock released after 1 ms is
//!   taken after about 1 ms, not 5.
//!
//! Durability is SQLite's for WAL with `synchronous = NORMAL`: a checkpoint syncs the WAL
//! before copying and the database file after.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::store::StoreError;

/// Between two checkpoints.
const INTERVAL: Duration = Duration::from_millis(100);

/// WAL frames (pages of 4 KiB) past which the log is restarted: 64 MiB.
const RESTART_FRAMES: i64 = 16_384;

/// Frames left uncopied below which the `RESTART` is asked for.
const REMAINING_FRAMES: i64 = 512;

/// `PASSIVE` rounds at most before a `RESTART`.
const ROUNDS: usize = 4;

/// WAL pages past which the writer checkpoints by itself (1 GiB): only if this thread cannot
/// keep up.
pub(super) const EMERGENCY_FRAMES: u32 = 262_144;

/// About how long a `RESTART` waits for the readers still on the log.
const READERS_WAIT_MS: u64 = 20;

/// A busy handler for a connection that must get its lock (about 30 s in all): sleeps 50 µs
/// more at each try, up to 2 ms.
pub(super) fn wait_for_lock(attempt: i32) -> bool {
    let t = u64::try_from(attempt).unwrap_or(0);
    std::thread::sleep(Duration::from_micros((50 * (t + 1)).min(2_000)));
    // 40 tries of growing sleeps (41 ms), then 2 ms each: about 30 s.
    t < 15_040
}

/// The busy handler of the checkpoint connection: the same steps, for about
/// [`READERS_WAIT_MS`] ms.
fn wait_for_readers(attempt: i32) -> bool {
    let t = u64::try_from(attempt).unwrap_or(0);
    std::thread::sleep(Duration::from_micros((50 * (t + 1)).min(2_000)));
    // Sleeps of 50, 100, ... 1,400 µs: about 20 ms over 28 tries.
    (50 * (t + 1) * (t + 2) / 2) < READERS_WAIT_MS * 1_000
}

/// Starts the checkpoint thread on `file`; it stops when `parado` is disconnected.
///
/// # Errors
/// [`StoreError::Database`] when the file cannot be opened; [`StoreError::WriterStopped`] when
/// the thread cannot be started.
pub(super) fn start(file: &Path, stopped: mpsc::Receiver<()>) -> Result<(), StoreError> {
    let conn = Connection::open_with_flags(
        file,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_handler(Some(wait_for_readers))?;
    std::thread::Builder::new()
        .name("carapi-sqlite-checkpoint".into())
        .spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
                if let Err(e) = step(&conn) {
                    tracing::warn!(erro = %e, "checkpoint do WAL falhou; tentado de novo a seguir");
                }
            }
        })
        .map_err(|_| StoreError::WriterStopped)?;
    Ok(())
}

/// `PRAGMA wal_checkpoint(modo)`: (frames in the WAL, frames copied).
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((r.get(1)?, r.get(2)?))
    })
}

/// One pass: a `PASSIVE` checkpoint, and a restart once the WAL is long.
fn step(conn: &Connection) -> rusqlite::Result<()> {
    let (mut frames, mut copied) = checkpoint(conn, "PASSIVE")?;
    if frames < RESTART_FRAMES {
        return Ok(());
    }
    for _ in 0..ROUNDS {
        if frames - copied < REMAINING_FRAMES {
            break;
        }
        (frames, copied) = checkpoint(conn, "PASSIVE")?;
    }
    // Busy (readers still on the log after the wait) is no error: the next pass tries again.
    checkpoint(conn, "RESTART").map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_waits_last_about_what_they_say() {
        let total = |f: fn(i32) -> bool| {
            let mut micros = 0u64;
            let mut t = 0;
            // The sleeps the handler would take, without sleeping them.
            loop {
                micros += (50 * (t as u64 + 1)).min(2_000);
                if !f(t) || t > 100_000 {
                    return (t, micros);
                }
                t += 1;
            }
        };
        let (_, readers) = total(wait_for_readers);
        assert!((15_000..=25_000).contains(&readers), "{readers} µs");
        let t = 15_040u64;
        let lock: u64 = (0..=t).map(|t| (50 * (t + 1)).min(2_000)).sum();
        assert!((29_000_000..=31_000_000).contains(&lock), "{lock} µs");
    }
}
