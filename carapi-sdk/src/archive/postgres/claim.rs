//! A purchase of one key reserved across processes: a transaction on the archive's runtime
//! holding the key's advisory lock, serving the claim's reads and its one append (committed,
//! which releases the lock), rolled back when the claim goes away.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use sqlx::postgres::PgPool;
use tokio::sync::{mpsc, oneshot};

use super::{Worker, append_on, fail, latest_on, lock};
use crate::EndpointConsulta;
use crate::archive::fork::ThisProcess;
use crate::archive::store::{BoxFuture, Claim};
use crate::archive::{ArchiveError, Entry, Kept, NewEntry};

/// The lock of one looked-up key: the first 8 bytes of a SHA-256 (the names hashed never
/// change: processes of different versions share one lock per key).
fn key_lock(consulta: EndpointConsulta, chave: &str) -> i64 {
    let d =
        Sha256::digest(format!("carapi-acervo-compra\n{}\n{chave}", consulta.name()).as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    i64::from_be_bytes(b)
}

enum Cmd {
    Latest(
        EndpointConsulta,
        String,
        oneshot::Sender<sqlx::Result<Kept>>,
    ),
    Append(Box<NewEntry>, oneshot::Sender<sqlx::Result<Entry>>),
}

/// Waits until no other process (nor task) holds `consulta` + `chave`, then holds it until the
/// claim appends or is dropped. Cancel-safe: a dropped future, or a dropped claim, rolls its
/// transaction back, which releases the lock.
pub(super) fn start(
    worker: Arc<ThisProcess<Worker>>,
    consulta: EndpointConsulta,
    chave: &str,
) -> BoxFuture<Result<Box<dyn Claim>, ArchiveError>> {
    let key = key_lock(consulta, chave);
    let (ready, acquired) = oneshot::channel();
    let (cmds, rx) = mpsc::unbounded_channel();
    worker
        .handle
        .spawn(hold(worker.pool.clone(), key, ready, rx));
    Box::pin(async move {
        acquired
            .await
            .map_err(|_| ArchiveError::plain("reservar a compra no acervo"))?
            .map_err(fail("reservar a compra no acervo"))?;
        Ok(Box::new(PgClaim {
            cmds,
            _worker: worker,
        }) as Box<dyn Claim>)
    })
}

/// The task behind a claim.
async fn hold(
    pool: PgPool,
    key: i64,
    ready: oneshot::Sender<sqlx::Result<()>>,
    mut cmds: mpsc::UnboundedReceiver<Cmd>,
) {
    let mut tx = match pool.begin().await {
        Ok(tx) => tx,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if let Err(e) = lock(&mut tx, key).await {
        let _ = ready.send(Err(e));
        let _ = tx.rollback().await;
        return;
    }
    if ready.send(Ok(())).is_err() {
        let _ = tx.rollback().await;
        return;
    }
    while let Some(cmd) = cmds.recv().await {
        match cmd {
            Cmd::Latest(consulta, chave, reply) => {
                let _ = reply.send(latest_on(&mut tx, consulta, &chave).await);
            }
            Cmd::Append(new, reply) => {
                let new = new.with_documents();
                let r = match append_on(&mut tx, &new).await {
                    Ok(e) => tx.commit().await.map(|()| e),
                    Err(e) => {
                        let _ = tx.rollback().await;
                        Err(e)
                    }
                };
                let _ = reply.send(r);
                return;
            }
        }
    }
    let _ = tx.rollback().await;
}

/// A purchase of one key reserved across processes.
struct PgClaim {
    cmds: mpsc::UnboundedSender<Cmd>,
    _worker: Arc<ThisProcess<Worker>>,
}

impl Claim for PgClaim {
    fn latest(
        &mut self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> BoxFuture<Result<Kept, ArchiveError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self
            .cmds
            .send(Cmd::Latest(consulta, chave.to_owned(), reply));
        Box::pin(async move {
            let what = "ler o acervo";
            sent.map_err(|_| ArchiveError::plain(what))?;
            answer
                .await
                .map_err(|_| ArchiveError::plain(what))?
                .map_err(fail(what))
        })
    }

    fn append(self: Box<Self>, new: NewEntry) -> BoxFuture<Result<Entry, ArchiveError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.cmds.send(Cmd::Append(Box::new(new), reply));
        Box::pin(async move {
            let what = "gravar no acervo";
            sent.map_err(|_| ArchiveError::plain(what))?;
            let entry = answer
                .await
                .map_err(|_| ArchiveError::plain(what))?
                .map_err(fail(what));
            drop(self);
            entry
        })
    }
}
