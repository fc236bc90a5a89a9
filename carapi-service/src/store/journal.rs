//! The journal of charges whose outcome could not be learned: a file outside the database
//! (beside the SQLite file, or `--diario`), one line per request id, fsynced before the client
//! is answered. A charge whose commit reply was lost while the database stayed away is
//! answered 500 without saying whether it was charged, and its id waits here until the
//! database tells; `razao conferir` lists the ids still open.
//!
//! When the database is reachable again (at start-up and on each turn of the server's jobs),
//! [`estornar_journaled`] looks each open id up: a charge that did commit is reversed once
//! ([`super::ConsultasStore::estornar_cobranca`]: a compensating ledger credit, the history row kept
//! and marked not charged), one that did not is left as it is; only after the database's
//! transaction committed is a `fechado` line appended (fsynced). A crash in between leaves the
//! id open, and the next pass finds the charge already reversed: nothing more is done.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ContaId, Estorno, Store, StoreError};

/// One journaled charge: its request id, account and the instant its history row would carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalEntry {
    /// The charge's request id (the history row's `request_id` when it committed).
    pub request_id: Uuid,
    /// The account charged.
    pub conta: ContaId,
    /// When the lookup was made (the history row's `data` when it committed).
    pub at: DateTime<Utc>,
}

/// The journal file (see the module documentation).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// One writer at a time: lines never interleave.
    write: Mutex<()>,
}

/// The journal beside a SQLite database file (`FILE.diario`), in the temporary folder for an
/// in-memory one, or in the working directory for PostgreSQL (`carapi.diario`), unless
/// `configured` names one.
pub fn journal_path(database_url: &str, configured: Option<&Path>) -> PathBuf {
    if let Some(p) = configured {
        return p.to_owned();
    }
    let file = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
        .map(|r| r.split('?').next().unwrap_or(r))
        .filter(|r| !r.is_empty() && !r.contains(":memory:"));
    match file {
        Some(f) => PathBuf::from(format!("{f}.diario")),
        None if database_url.contains(":memory:") => {
            std::env::temp_dir().join(format!("carapi-memoria-{}.diario", std::process::id()))
        }
        None => PathBuf::from("carapi.diario"),
    }
}

impl Journal {
    /// The journal at `path` (created on the first append).
    pub fn at(path: impl Into<PathBuf>) -> Journal {
        Journal {
            path: path.into(),
            write: Mutex::new(()),
        }
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `e` and fsyncs the file (and its folder when the file is new), mode `0600`.
    ///
    /// # Errors
    /// The [`io::Error`] of opening, writing or syncing.
    pub(crate) fn append(&self, e: &JournalEntry) -> io::Result<()> {
        self.write_line(&format!(
            "aberto {} {} {}",
            e.request_id,
            e.conta.0,
            e.at.timestamp_millis()
        ))
    }

    /// Closes the entry of `request_id` (its outcome is settled in the database): appends a
    /// `fechado` line and fsyncs the file.
    ///
    /// # Errors
    /// The [`io::Error`] of opening, writing or syncing.
    pub(crate) fn close(&self, request_id: Uuid) -> io::Result<()> {
        self.write_line(&format!("fechado {request_id}"))
    }

    /// Removes the file when no entry is open any more (so it does not grow with closed
    /// entries), under the writers' lock: an entry appended meanwhile keeps it.
    ///
    /// # Errors
    /// The [`io::Error`] of reading or removing the file.
    fn remove_if_settled(&self) -> io::Result<()> {
        let _time = self.write.lock().unwrap_or_else(|p| p.into_inner());
        if self.entries()?.is_empty() {
            match std::fs::remove_file(&self.path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Appends `linha` and fsyncs the file (and its folder when the file is new), mode `0600`.
    fn write_line(&self, line: &str) -> io::Result<()> {
        let _time = self.write.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = !self.path.exists();
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&self.path)?;
        writeln!(f, "{line}")?;
        f.sync_all()?;
        if fresh && let Some(folder) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::File::open(folder)?.sync_all()?;
        }
        Ok(())
    }

    /// The journaled charges still open (journaled and not closed), oldest first (none when the
    /// file does not exist; unreadable lines are skipped).
    ///
    /// # Errors
    /// The [`io::Error`] of reading the file.
    pub fn entries(&self) -> io::Result<Vec<JournalEntry>> {
        let f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut v: Vec<JournalEntry> = Vec::new();
        for line in io::BufReader::new(f).lines() {
            match parse(&line?) {
                Some(Line::Open(e)) => v.push(e),
                Some(Line::Closed(id)) => v.retain(|e| e.request_id != id),
                None => {}
            }
        }
        Ok(v)
    }
}

/// One line of the journal.
enum Line {
    Open(JournalEntry),
    Closed(Uuid),
}

fn parse(line: &str) -> Option<Line> {
    let mut p = line.split_whitespace();
    match p.next()? {
        "aberto" => Some(Line::Open(JournalEntry {
            request_id: p.next()?.parse().ok()?,
            conta: ContaId(p.next()?.parse().ok()?),
            at: DateTime::from_timestamp_millis(p.next()?.parse().ok()?)?,
        })),
        "fechado" => Some(Line::Closed(p.next()?.parse().ok()?)),
        _ => None,
    }
}

/// What one pass of [`estornar_journaled`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JournalPass {
    /// Charges reversed now.
    pub estornadas: u32,
    /// Entries closed (reversed now, found reversed already, or never committed).
    pub closed: u32,
}

/// Settles every open entry of `journal` against `store` (see the module documentation): each
/// id is reversed once if its charge committed, and closed after the database's transaction
/// committed. Stops at the first database error (the database is still away: the rest waits
/// for the next pass).
///
/// # Errors
/// The [`StoreError`] of the first reversal that failed; a journal that cannot be read or
/// closed is [`StoreError::Database`] (its ids stay open and are settled again, idempotently).
pub async fn estornar_journaled(
    store: &dyn Store,
    journal: &Journal,
) -> Result<JournalPass, StoreError> {
    let error_io = |e: io::Error| {
        StoreError::Database(format!("diário {}: {e}", journal.path().display()).into())
    };
    let mut done = JournalPass::default();
    for e in journal.entries().map_err(error_io)? {
        let r = store.estornar_cobranca(e.conta, e.request_id, e.at).await?;
        if let Estorno::Estornada { valor } = r {
            done.estornadas += 1;
            tracing::warn!(conta = %e.conta, request_id = %e.request_id, valor = %valor,
                "cobrança respondida com erro estornada");
        }
        journal.close(e.request_id).map_err(error_io)?;
        done.closed += 1;
    }
    if done.closed > 0 {
        journal.remove_if_settled().map_err(error_io)?;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_entries_read_back_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::at(dir.path().join("x.diario"));
        assert_eq!(j.entries().unwrap(), Vec::new());
        let at = DateTime::from_timestamp_millis(1_780_000_000_123).unwrap();
        let a = JournalEntry {
            request_id: Uuid::new_v4(),
            conta: ContaId(7),
            at,
        };
        let b = JournalEntry {
            request_id: Uuid::new_v4(),
            conta: ContaId(8),
            at,
        };
        j.append(&a).unwrap();
        j.append(&b).unwrap();
        assert_eq!(j.entries().unwrap(), vec![a, b]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_closed_entry_is_no_longer_open_and_a_settled_journal_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::at(dir.path().join("x.diario"));
        let at = DateTime::from_timestamp_millis(1_780_000_000_123).unwrap();
        let [a, b] = [7, 8].map(|c| JournalEntry {
            request_id: Uuid::new_v4(),
            conta: ContaId(c),
            at,
        });
        j.append(&a).unwrap();
        j.append(&b).unwrap();
        j.close(a.request_id).unwrap();
        assert_eq!(j.entries().unwrap(), vec![b]);
        j.remove_if_settled().unwrap();
        assert!(j.path().exists(), "an open entry keeps the file");
        j.close(b.request_id).unwrap();
        assert_eq!(j.entries().unwrap(), Vec::new());
        j.remove_if_settled().unwrap();
        assert!(!j.path().exists());
    }

    #[test]
    fn the_journal_sits_beside_the_sqlite_file_unless_configured() {
        assert_eq!(
            journal_path("sqlite:///var/lib/carapi/c.db?mode=rwc", None),
            PathBuf::from("/var/lib/carapi/c.db.diario")
        );
        assert_eq!(
            journal_path("postgres://u@h/db", None),
            PathBuf::from("carapi.diario")
        );
        assert_eq!(
            journal_path("sqlite://c.db", Some(Path::new("/x/d"))),
            PathBuf::from("/x/d")
        );
    }
}
