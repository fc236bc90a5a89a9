//! The SQLite archive of one machine: a writer connection whose appends are committed in
//! groups, and a reader connection for lookups, which a writer never blocks (write-ahead log).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rusqlite::Connection;

use super::{ArchiveError, Entry, NewEntry, store};

/// One append waiting for its group's commit, and where its result goes.
struct Pending {
    new: NewEntry,
    done: Arc<Mutex<Option<Result<Entry, ArchiveError>>>>,
}

/// The two connections of a SQLite archive and the appends waiting for the writer.
pub(crate) struct Local {
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
    /// Appends not yet taken by a writer; only drained while `writer` is held.
    queue: Mutex<Vec<Pending>>,
}

impl Local {
    /// Opens both connections to the archive file at `path` (created and migrated by the
    /// first).
    pub(crate) fn open(path: &Path) -> Result<Local, ArchiveError> {
        let writer = store::open(path)?;
        let reader = store::open(path)?;
        Ok(Local {
            writer: Mutex::new(writer),
            reader: Mutex::new(reader),
            queue: Mutex::new(Vec::new()),
        })
    }

    /// The reader connection (reads see every committed append).
    pub(crate) fn read(&self) -> MutexGuard<'_, Connection> {
        lock(&self.reader)
    }

    /// The writer connection (purges, links, limits; appends go through [`Local::append`]).
    pub(crate) fn write(&self) -> MutexGuard<'_, Connection> {
        lock(&self.writer)
    }

    /// Appends `new` at the end of the chain and returns its entry once committed. Appends
    /// that arrive while another group commits wait for the writer, and the first of them to
    /// get it commits them all in one transaction (group commit: one write lock and one commit
    /// for the group, each entry still chained after the one before). When a group's
    /// transaction fails, each of its entries is tried alone, so each gets its own result.
    pub(crate) fn append(&self, new: NewEntry) -> Result<Entry, ArchiveError> {
        let done = Arc::new(Mutex::new(None));
        lock(&self.queue).push(Pending {
            new,
            done: Arc::clone(&done),
        });
        let mut conn = self.write();
        // Whoever drained the queue filled every result of it before releasing the writer:
        // ours is either filled or still queued.
        if let Some(result) = lock(&done).take() {
            return result;
        }
        let group = std::mem::take(&mut *lock(&self.queue));
        let entries: Vec<&NewEntry> = group.iter().map(|p| &p.new).collect();
        match store::append_group(&mut conn, &entries) {
            Ok(sealed) => {
                for (p, e) in group.iter().zip(sealed) {
                    *lock(&p.done) = Some(Ok(e));
                }
            }
            Err(e) if group.len() == 1 => *lock(&group[0].done) = Some(Err(e)),
            Err(_) => {
                for p in &group {
                    *lock(&p.done) =
                        Some(store::append_group(&mut conn, &[&p.new]).and_then(|mut v| {
                            v.pop()
                                .ok_or_else(|| ArchiveError::plain("gravar no acervo"))
                        }));
                }
            }
        }
        drop(conn);
        lock(&done)
            .take()
            .unwrap_or_else(|| Err(ArchiveError::plain("gravar no acervo: grupo interrompido")))
    }
}

/// A connection or queue, even after a panic elsewhere.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::Utc;

    use super::*;
    use crate::archive::{Archive, LegalBasis};

    fn entry(i: usize) -> NewEntry {
        NewEntry {
            operation: "car",
            chave: format!("DF-5300108-{i:032X}"),
            body: format!("{{\"i\":{i}}}").into_bytes(),
            preco: None,
            data_consulta: None,
            bought_at: Utc::now(),
            account: "0123456789abcdef".into(),
            purpose: "teste".into(),
            legal_basis: LegalBasis::LegitimateInterest,
            documentos: Vec::new(),
        }
    }

    /// Appends from many threads at once (committed in groups) each get their own entry, the
    /// entries are numbered without a gap, every one is readable at once, and the chain
    /// verifies.
    #[test]
    fn concurrent_appends_chain_in_groups() {
        let dir = tempfile::tempdir().expect("dir");
        let archive = Archive::open(dir.path().join("a.sqlite3")).expect("archive");
        let seqs: Vec<u64> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8)
                .map(|t| {
                    let archive = archive.clone();
                    s.spawn(move || {
                        (0..40)
                            .map(|i| {
                                let new = entry(t * 100 + i);
                                let chave = new.chave.clone();
                                let e = archive.append(new).expect("append");
                                let read = archive.latest("car", &chave).expect("read");
                                assert_eq!(read.map(|(r, _)| r.hash), Some(e.hash));
                                e.seq
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|t| t.join().expect("thread"))
                .collect()
        });
        let distinct: BTreeSet<u64> = seqs.iter().copied().collect();
        assert_eq!(distinct, (1..=320).collect::<BTreeSet<u64>>());
        let v = archive.verify(None).expect("verify");
        assert!(v.is_ok(), "{:?}", v.failures);
    }
}
