//! The in-flight journal of a batch: `.<saida>.enviando` next to `--saida`.
//!
//! Before each lookup is sent, `<key>\t<RFC 3339 time>` is appended and flushed; the file is
//! removed when a run ends normally (every sent lookup then has its answer handled). If the
//! process is killed, the journal names the keys whose request may have been charged without
//! its answer reaching `--saida`. The next run asks the free history (`GET /v1/historico`) about
//! just those keys: one charged 200 for the key on the batch's endpoint since it was sent means
//! it was paid, and it is recorded as answered (`encontrado`, without the lost data) instead of
//! being bought again. So a resumed batch never pays twice, even after `kill -9`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chrono::{DateTime, FixedOffset, Utc};

/// The journal's path for an output file: `dir/.<name>.enviando`.
pub(crate) fn journal_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}.enviando"))
}

/// The keys in a journal with the first time each was sent (empty when there is none).
///
/// # Errors
/// Read errors other than "not found".
pub(crate) fn read(path: &Path) -> io::Result<Vec<(String, DateTime<FixedOffset>)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e),
    };
    let mut out: Vec<(String, DateTime<FixedOffset>)> = vec![];
    for l in text.lines() {
        let Some((k, t)) = l.split_once('\t') else {
            continue;
        };
        let Ok(t) = DateTime::parse_from_rfc3339(t) else {
            continue;
        };
        if !out.iter().any(|(x, _)| x == k) {
            out.push((k.to_owned(), t));
        }
    }
    Ok(out)
}

/// An open journal.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    file: Mutex<File>,
}

impl Journal {
    /// Opens (appending to) the journal at `path`.
    ///
    /// # Errors
    /// File-system errors.
    pub(crate) fn open(path: PathBuf) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Journal {
            path,
            file: Mutex::new(file),
        })
    }

    /// Records that `chave` is about to be sent.
    ///
    /// # Errors
    /// Write errors (the caller then does not send).
    pub(crate) fn record_sending(&self, chave: &str) -> io::Result<()> {
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(f, "{chave}\t{}", Utc::now().to_rfc3339())?;
        f.flush()
    }

    /// Removes the journal: every sent lookup was handled.
    pub(crate) fn finish(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = journal_path(&dir.path().join("r.jsonl"));
        assert_eq!(p.file_name().unwrap(), ".r.jsonl.enviando");
        assert!(read(&p).unwrap().is_empty());
        let d = Journal::open(p.clone()).unwrap();
        d.record_sending("A").unwrap();
        d.record_sending("B").unwrap();
        d.record_sending("A").unwrap();
        let l = read(&p).unwrap();
        assert_eq!(
            l.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["A", "B"]
        );
        d.finish();
        assert!(!p.exists());
    }
}
