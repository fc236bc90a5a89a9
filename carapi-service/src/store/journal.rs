//! The journal of charges whose outcome could not be learned: a file outside the database
//! (beside the SQLite file, or `--diario`), one line per request id, fsynced before the client
//! is answered. A charge whose commit reply was lost while the database stayed away is
//! answered 500 without saying whether it was charged, and its id waits here until the
//! database tells; `razao conferir` lists the ids still open.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::ContaId;

/// One journaled charge: its request id, account and the instant its history row would carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalEntry {
    /// The charge's request id (the history row's `request_id` when it committed).
    pub request_id: Uuid,
    /// The account charged.
    pub conta: ContaId,
    /// When the lookup was made (the history row's `data` when it committed).
    pub em: DateTime<Utc>,
}

/// The journal file (see the module documentation).
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// One writer at a time: lines never interleave.
    escrita: Mutex<()>,
}

/// The journal beside a SQLite database file (`FILE.diario`), in the temporary folder for an
/// in-memory one, or in the working directory for PostgreSQL (`carapi.diario`), unless
/// `configured` names one.
pub fn journal_path(database_url: &str, configured: Option<&Path>) -> PathBuf {
    if let Some(p) = configured {
        return p.to_owned();
    }
    let arquivo = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
        .map(|r| r.split('?').next().unwrap_or(r))
        .filter(|r| !r.is_empty() && !r.contains(":memory:"));
    match arquivo {
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
            escrita: Mutex::new(()),
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
        let _vez = self.escrita.lock().unwrap_or_else(|p| p.into_inner());
        let novo = !self.path.exists();
        let mut opcoes = std::fs::OpenOptions::new();
        opcoes.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opcoes, 0o600);
        let mut f = opcoes.open(&self.path)?;
        writeln!(
            f,
            "aberto {} {} {}",
            e.request_id,
            e.conta.0,
            e.em.timestamp_millis()
        )?;
        f.sync_all()?;
        if novo && let Some(pasta) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::File::open(pasta)?.sync_all()?;
        }
        Ok(())
    }

    /// The journaled charges, oldest first (none when the file does not exist; unreadable lines
    /// are skipped).
    ///
    /// # Errors
    /// The [`io::Error`] of reading the file.
    pub fn entries(&self) -> io::Result<Vec<JournalEntry>> {
        let f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut v = Vec::new();
        for linha in io::BufReader::new(f).lines() {
            if let Some(e) = parse(&linha?) {
                v.push(e);
            }
        }
        Ok(v)
    }
}

fn parse(linha: &str) -> Option<JournalEntry> {
    let mut p = linha.split_whitespace();
    if p.next()? != "aberto" {
        return None;
    }
    Some(JournalEntry {
        request_id: p.next()?.parse().ok()?,
        conta: ContaId(p.next()?.parse().ok()?),
        em: DateTime::from_timestamp_millis(p.next()?.parse().ok()?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_entries_read_back_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::at(dir.path().join("x.diario"));
        assert_eq!(j.entries().unwrap(), Vec::new());
        let em = DateTime::from_timestamp_millis(1_780_000_000_123).unwrap();
        let a = JournalEntry {
            request_id: Uuid::new_v4(),
            conta: ContaId(7),
            em,
        };
        let b = JournalEntry {
            request_id: Uuid::new_v4(),
            conta: ContaId(8),
            em,
        };
        j.append(&a).unwrap();
        j.append(&b).unwrap();
        assert_eq!(j.entries().unwrap(), vec![a, b]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let modo = std::fs::metadata(j.path()).unwrap().permissions().mode();
            assert_eq!(modo & 0o777, 0o600);
        }
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
