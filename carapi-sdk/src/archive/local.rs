//! The SQLite archive of one machine: a writer connection whose appends are committed in
//! groups, and a reader connection for lookups, which a writer never blocks (write-ahead log).
//!
//! An append either waits for its commit ([`Local::append`]: its entry, or why it failed) or is
//! left to a committer on the blocking pool ([`Local::append_behind`]: the lookup returns at
//! once; a failure is a WARN event), which lets a group gather for [`LINGER`] and commits it.
//! Every read but [`Local::latest`] first commits what is queued or being committed, so this
//! process reads its own appends; [`Local::latest`] does so only when the key it reads is
//! queued or being committed. Dropping the last handle commits what is left.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rusqlite::Connection;

use super::{ArchiveError, Entry, NewEntry, store};

/// How long the committer lets a group gather before it commits it.
const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// One append waiting for its group's commit, and where its result goes.
struct Pending {
    new: NewEntry,
    done: Done,
}

/// Who hears how an append ended.
enum Done {
    /// A caller of [`Local::append`], blocked until its slot is filled.
    Slot(Arc<Mutex<Option<Result<Entry, ArchiveError>>>>),
    /// Nobody waits ([`Local::append_behind`]): a failure becomes a WARN event.
    Behind,
}

/// Appends not yet committed, and whether a committer is running for them.
#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    /// The operation and key of each append of the group being committed.
    in_commit: Vec<(&'static str, String)>,
    committing: bool,
}

impl Queue {
    /// True when an append of `operation` for `chave` is queued or being committed.
    fn holds(&self, operation: &str, chave: &str) -> bool {
        let pending = self.pending.iter().map(|p| (p.new.operation, &p.new.chave));
        let in_commit = self.in_commit.iter().map(|(o, c)| (*o, c));
        pending
            .chain(in_commit)
            .any(|(o, c)| o == operation && c == chave)
    }

    /// True when an append is queued or being committed.
    fn is_busy(&self) -> bool {
        !self.pending.is_empty() || !self.in_commit.is_empty()
    }
}

/// The two connections of a SQLite archive and the appends waiting for the writer.
pub(crate) struct Local {
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
    /// Only drained while `writer` is held, so a drained append is committed (its result
    /// given) before the writer is released.
    queue: Mutex<Queue>,
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
            queue: Mutex::new(Queue::default()),
        })
    }

    /// The reader connection, once every queued append is committed.
    pub(crate) fn read(&self) -> MutexGuard<'_, Connection> {
        self.flush();
        lock(&self.reader)
    }

    /// The newest kept answer of `operation` for `chave`, committing the queue first only
    /// when it holds an append of that key (a lookup of another key never waits for a commit).
    pub(crate) fn latest(
        &self,
        operation: &str,
        chave: &str,
    ) -> Result<Option<(Entry, Vec<u8>)>, ArchiveError> {
        if self.has_pending(operation, chave) {
            self.flush();
        }
        store::latest(&lock(&self.reader), operation, chave)
    }

    /// True when an append of `operation` for `chave` is queued or being committed.
    pub(crate) fn has_pending(&self, operation: &str, chave: &str) -> bool {
        lock(&self.queue).holds(operation, chave)
    }

    /// The writer connection, once every queued append is committed (purges, links, limits).
    pub(crate) fn write(&self) -> MutexGuard<'_, Connection> {
        let mut conn = lock(&self.writer);
        self.commit_queue(&mut conn);
        conn
    }

    /// Commits every queued append, and waits for a group being committed.
    pub(crate) fn flush(&self) {
        if lock(&self.queue).is_busy() {
            drop(self.write());
        }
    }

    /// Takes the queue (the writer held: `conn`) and commits it, its keys in
    /// [`Queue::in_commit`] meanwhile.
    fn commit_queue(&self, conn: &mut Connection) {
        let group = {
            let mut q = lock(&self.queue);
            let group = std::mem::take(&mut q.pending);
            q.in_commit = group
                .iter()
                .map(|p| (p.new.operation, p.new.chave.clone()))
                .collect();
            group
        };
        commit(conn, group);
        lock(&self.queue).in_commit.clear();
    }

    /// Appends `new` at the end of the chain and returns its entry once committed. Appends
    /// that arrive while another group commits wait for the writer, and the first of them to
    /// get it commits them all in one transaction (group commit: one write lock and one commit
    /// for the group, each entry still chained after the one before).
    pub(crate) fn append(&self, new: NewEntry) -> Result<Entry, ArchiveError> {
        let slot = Arc::new(Mutex::new(None));
        lock(&self.queue).pending.push(Pending {
            new,
            done: Done::Slot(Arc::clone(&slot)),
        });
        // Whoever drained the queue gave every result of it before releasing the writer: ours
        // is either given or still queued, and `write` commits the queue.
        drop(self.write());
        lock(&slot)
            .take()
            .unwrap_or_else(|| Err(ArchiveError::plain("gravar no acervo: grupo interrompido")))
    }

    /// Queues `new` for the committer and returns at once; starts the committer (a task of
    /// tokio's blocking pool) when none runs, or commits here when there is no runtime.
    pub(crate) fn append_behind(self: &Arc<Self>, new: NewEntry) {
        let start = {
            let mut q = lock(&self.queue);
            q.pending.push(Pending {
                new,
                done: Done::Behind,
            });
            !std::mem::replace(&mut q.committing, true)
        };
        if !start {
            return;
        }
        let me = Arc::clone(self);
        let run = move || me.commit_all();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(run)),
            Err(_) => run(),
        }
    }

    /// The committer: commits groups until the queue is empty. Should a commit panic (a bug),
    /// the flag is cleared as the committer unwinds, so the next append starts another.
    fn commit_all(&self) {
        struct Running<'a>(&'a Mutex<Queue>);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    lock(self.0).committing = false;
                }
            }
        }
        let _running = Running(&self.queue);
        loop {
            // A group gathers what arrives meanwhile: fewer, larger commits (a batch's answers
            // arrive every few hundred microseconds), at the cost of this much time in the queue.
            std::thread::sleep(LINGER);
            let mut conn = lock(&self.writer);
            {
                let mut q = lock(&self.queue);
                if q.pending.is_empty() {
                    q.committing = false;
                    return;
                }
            }
            self.commit_queue(&mut conn);
        }
    }
}

impl Drop for Local {
    /// Commits what is still queued (a committer that never ran, at a runtime's shutdown).
    fn drop(&mut self) {
        self.flush();
    }
}

/// Commits `group` in one transaction and gives each append its result; when the group's
/// transaction fails, each append is tried alone, so each gets its own result.
fn commit(conn: &mut Connection, group: Vec<Pending>) {
    if group.is_empty() {
        return;
    }
    // The documents of an answer left behind are extracted here, off the lookup's path.
    let group: Vec<Pending> = group
        .into_iter()
        .map(|p| match p.done {
            Done::Behind => Pending {
                new: p.new.with_documents(),
                done: Done::Behind,
            },
            done @ Done::Slot(_) => Pending { new: p.new, done },
        })
        .collect();
    let entries: Vec<&NewEntry> = group.iter().map(|p| &p.new).collect();
    match store::append_group(conn, &entries) {
        Ok(sealed) => {
            for (p, e) in group.into_iter().zip(sealed) {
                p.done.give(Ok(e), &p.new);
            }
        }
        Err(e) if group.len() == 1 => {
            if let Some(p) = group.into_iter().next() {
                p.done.give(Err(e), &p.new);
            }
        }
        Err(_) => {
            for p in group {
                let alone = store::append_group(conn, &[&p.new]).and_then(|mut v| {
                    v.pop()
                        .ok_or_else(|| ArchiveError::plain("gravar no acervo"))
                });
                p.done.give(alone, &p.new);
            }
        }
    }
}

impl Done {
    fn give(self, result: Result<Entry, ArchiveError>, new: &NewEntry) {
        match (self, result) {
            (Done::Slot(slot), r) => *lock(&slot) = Some(r),
            (Done::Behind, Ok(_)) => {}
            (Done::Behind, Err(e)) => {
                let error =
                    std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source())
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(": ");
                tracing::warn!(target: "carapi_sdk::archive", operation = new.operation, error = %error, "resposta paga não arquivada");
            }
        }
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
            operation: "car_completo",
            chave: format!("DF-5300108-{i:032X}"),
            body: format!("{{\"dados\":{{\"proprietarios\":[{{\"documento\":\"529.982.247-25\"}}]}},\"i\":{i}}}")
                .into_bytes(),
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
                                let read = archive.latest("car_completo", &chave).expect("read");
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

    /// Answers left to the committer are all committed in order, with their documents, and
    /// this process reads them at once: a read of the key, of the whole archive and of a data
    /// subject each commit the queue first.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn left_behind_appends_are_read_back_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        let archive = Archive::open(dir.path().join("a.sqlite3")).expect("archive");
        for i in 0..200 {
            assert!(archive.append_behind(entry(i)).is_none());
            let chave = format!("DF-5300108-{i:032X}");
            let (e, body) = archive
                .latest("car_completo", &chave)
                .expect("read")
                .expect("the answer just left behind");
            assert_eq!(body, entry(i).body);
            assert_eq!(e.chave.as_deref(), Some(chave.as_str()));
        }
        for i in 200..400 {
            assert!(archive.append_behind(entry(i)).is_none());
        }
        let all = archive.entries().expect("entries");
        assert_eq!(all.len(), 400);
        assert!(all.iter().zip(1..).all(|(e, n)| e.seq == n));
        let doc = crate::CpfCnpj::parse("52998224725").expect("cpf");
        assert_eq!(archive.subject(&doc).expect("subject").len(), 400);
        assert!(archive.verify(None).expect("verify").is_ok());
    }

    /// What is still queued when the program ends is committed: the runtime's end waits for
    /// the committer, and the last handle's drop commits a queue no committer took.
    #[test]
    fn nothing_queued_is_lost_at_the_end() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.sqlite3");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let archive = Archive::open(&path).expect("archive");
            for i in 0..50 {
                assert!(archive.append_behind(entry(i)).is_none());
            }
        });
        drop(rt);
        let again = Archive::open(&path).expect("reopen");
        assert_eq!(again.entries().expect("entries").len(), 50);
        assert!(again.verify(None).expect("verify").is_ok());
    }
}
