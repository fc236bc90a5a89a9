//! The writer of a SQLite archive in this process: a thread of its own that commits the appends
//! of every handle and client of the file in groups, in order. An append waits for its group's
//! commit (its entry, or why it failed); appends that arrive while a group commits form the next
//! group, so a batch shares commits without any lookup lingering for one.
//!
//! The thread ends when the archive's last handle goes (its queue committed first).

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::sql;
use crate::archive::{ArchiveError, Entry, NewEntry};

/// Most appends committed in one transaction.
const MAX_GROUP: usize = 256;

/// One append and where its entry goes.
struct Pending {
    new: NewEntry,
    done: oneshot::Sender<Result<Entry, ArchiveError>>,
}

/// Appends sent and not yet committed: reads wait for none to be left
/// ([`Committer::flush`]).
#[derive(Default)]
struct InFlight {
    count: Mutex<u64>,
    zero: Condvar,
}

/// The writer thread of one archive file, and the way to it.
pub(crate) struct Committer {
    queue: Option<mpsc::Sender<Pending>>,
    thread: Option<JoinHandle<()>>,
    in_flight: Arc<InFlight>,
    /// The writer connection: the thread's, also lent to purges and links.
    writer: Arc<Mutex<Connection>>,
}

impl Committer {
    /// Starts the thread over `writer`.
    pub(crate) fn start(writer: Connection) -> Result<Committer, ArchiveError> {
        let writer = Arc::new(Mutex::new(writer));
        let in_flight = Arc::new(InFlight::default());
        let (queue, pending) = mpsc::channel();
        let (w, f) = (Arc::clone(&writer), Arc::clone(&in_flight));
        let thread = std::thread::Builder::new()
            .name("carapi-acervo".into())
            .spawn(move || run(&w, &f, &pending))
            .map_err(ArchiveError::io("iniciar o gravador do acervo"))?;
        Ok(Committer {
            queue: Some(queue),
            thread: Some(thread),
            in_flight,
            writer,
        })
    }

    /// Queues `new` (its documents not yet extracted); the receiver gets its entry once
    /// committed.
    pub(crate) fn append(&self, new: NewEntry) -> oneshot::Receiver<Result<Entry, ArchiveError>> {
        let (done, entry) = oneshot::channel();
        *lock(&self.in_flight.count) += 1;
        let sent = self
            .queue
            .as_ref()
            .is_some_and(|q| q.send(Pending { new, done }).is_ok());
        if !sent {
            // The thread is gone (it panicked: a bug); the receiver reports it.
            settle(&self.in_flight, 1);
        }
        entry
    }

    /// Waits until every append sent so far is committed (a read then sees them).
    pub(crate) fn flush(&self) {
        let mut count = lock(&self.in_flight.count);
        while *count > 0 {
            count = self
                .in_flight
                .zero
                .wait(count)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The writer connection, once every queued append is committed (purges, links, limits).
    pub(crate) fn writer(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.flush();
        lock(&self.writer)
    }

    /// Stops the thread after it commits what is queued (the archive's last handle).
    pub(crate) fn stop(&mut self) {
        drop(self.queue.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: takes what is queued (waiting for the first), commits it as one group, repeats
/// until every sender is gone.
fn run(writer: &Mutex<Connection>, in_flight: &InFlight, pending: &mpsc::Receiver<Pending>) {
    /// Should a commit panic (a bug), no reader waits for ever: the count goes to zero as the
    /// thread unwinds (each append's receiver hears its sender dropped).
    struct Unwinding<'a>(&'a InFlight);
    impl Drop for Unwinding<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                *lock(&self.0.count) = 0;
                self.0.zero.notify_all();
            }
        }
    }
    let _unwinding = Unwinding(in_flight);
    while let Ok(first) = pending.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match pending.try_recv() {
                Ok(p) => group.push(p),
                Err(_) => break,
            }
        }
        let n = group.len() as u64;
        commit(&mut lock(writer), group);
        settle(in_flight, n);
    }
}

/// `n` appends ended: wakes the readers waiting for none to be left.
fn settle(in_flight: &InFlight, n: u64) {
    let mut count = lock(&in_flight.count);
    *count = count.saturating_sub(n);
    if *count == 0 {
        in_flight.zero.notify_all();
    }
}

/// Commits `group` in one transaction and gives each append its entry; when the group's
/// transaction fails, each append is tried alone, so each gets its own result.
fn commit(conn: &mut Connection, group: Vec<Pending>) {
    // The documents are extracted here, off the lookup's path.
    let group: Vec<Pending> = group
        .into_iter()
        .map(|p| Pending {
            new: p.new.with_documents(),
            done: p.done,
        })
        .collect();
    let entries: Vec<&NewEntry> = group.iter().map(|p| &p.new).collect();
    match sql::append_group(conn, &entries) {
        Ok(sealed) => {
            for (p, e) in group.into_iter().zip(sealed) {
                let _ = p.done.send(Ok(e));
            }
        }
        Err(e) if group.len() == 1 => {
            if let Some(p) = group.into_iter().next() {
                let _ = p.done.send(Err(e));
            }
        }
        Err(_) => {
            for p in group {
                let alone = sql::append_group(conn, &[&p.new]).and_then(|mut v| {
                    v.pop()
                        .ok_or_else(|| ArchiveError::plain("gravar no acervo"))
                });
                let _ = p.done.send(alone);
            }
        }
    }
}

/// A lock, even after a panic elsewhere.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use chrono::Utc;

    use crate::EndpointConsulta;
    use crate::archive::{Archive, LegalBasis, NewEntry};

    fn entry(i: usize) -> NewEntry {
        NewEntry {
            consulta: EndpointConsulta::CarCompleto,
            chave: format!("DF-5300108-{i:032X}"),
            body: format!("{{\"dados\":{{\"proprietarios\":[{{\"documento\":\"529.982.247-25\"}}]}},\"i\":{i}}}")
                .into_bytes(),
            preco: None,
            data_consulta: None,
            bought_at: Utc::now(),
            conta: "0123456789abcdef".into(),
            purpose: "teste".into(),
            legal_basis: LegalBasis::LegitimateInterest,
            documentos: Vec::new(),
        }
    }

    /// Appends from many tasks at once, through two handles of one file (committed in groups by
    /// one writer) each get their own entry, numbered without a gap, with their documents, and
    /// the chain verifies.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_appends_through_two_handles_chain_in_groups() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.sqlite3");
        let handles = [
            Archive::open(&path).expect("one"),
            Archive::open(&path).expect("two"),
        ];
        let tasks: Vec<_> = (0..320)
            .map(|i| {
                let a = handles[i % 2].clone();
                tokio::spawn(async move { a.append(entry(i)).await.expect("append").seq })
            })
            .collect();
        let mut seqs = BTreeSet::new();
        for t in tasks {
            seqs.insert(t.await.expect("task"));
        }
        assert_eq!(seqs, (1..=320).collect::<BTreeSet<u64>>());
        let doc = crate::CpfCnpj::parse("52998224725").expect("cpf");
        assert_eq!(handles[1].subject(&doc).expect("subject").len(), 320);
        assert!(handles[0].verify(None).expect("verify").is_ok());
    }

    /// What was queued when the last handle goes is committed before the file is closed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_last_handle_commits_what_is_queued() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.sqlite3");
        let archive = Archive::open(&path).expect("archive");
        let pending: Vec<_> = (0..50).map(|i| archive.append(entry(i))).collect();
        drop(archive);
        drop(pending);
        let again = Archive::open(&path).expect("reopen");
        assert_eq!(again.entries().expect("entries").len(), 50);
    }
}
