//! Charged lookups: what happens on the caller's task, and what runs in a task the client owns.
//!
//! On the caller's task, where dropping the call (or cancelling its token) sends nothing: the
//! spend guard's reservation (which may wait under a cap), the rate limiter's permit, and, with
//! an archive, the reads, the key's flight and the claim across processes. Then the purchase is
//! spawned in a task the client tracks ([`Client::close`]), which owns all of them: it sends,
//! retries while its caller still waits, commits the spend, appends the answer to the archive,
//! and only then lets go of the key. A caller that leaves after the spawn loses its answer, not
//! the money spent on it: the answer is counted and kept.

use std::future::Future;

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::http::{Attempts, Reply, Req, call_span, decode};
use super::{Client, Op};
use crate::{Answer, Error, Result};

/// Where a purchase task sends its result.
pub(crate) type ReplyTo<T> = oneshot::Sender<Result<T>>;

impl Client {
    /// A charged lookup's JSON, with its provenance: through the archive when the client has
    /// one (feature `archive`), else bought.
    pub(crate) async fn consulta_json<T: serde::de::DeserializeOwned>(
        &self,
        req: Req,
    ) -> Result<Answer<T>> {
        let op = req.op;
        self.consulta_bytes(req)
            .await?
            .try_map(|bytes| decode(op, 200, &bytes))
    }

    /// A charged lookup's body, with its provenance.
    pub(crate) async fn consulta_bytes(&self, req: Req) -> Result<Answer<Bytes>> {
        #[cfg(feature = "archive")]
        if let Some(setup) = self.archive_for(&req) {
            return self.through_archive(setup, req).await;
        }
        let op = req.op;
        let (_, _, bytes) = self
            .execute_charged(req, true)
            .await?
            .into_parts(op, true)
            .await?;
        Ok(Answer::from_api(bytes))
    }

    /// Sends a charged lookup (a sandbox value goes as a free call): reserves its price and
    /// takes its permit here, then buys it in a task the client owns (see the module docs).
    /// When the account's prices are still unknown and there is no cap, they are read alongside
    /// the lookup (one free `GET /v1/saldo`), and the call returns once both ended, so
    /// [`Client::gasto`] is exact then.
    pub(crate) async fn execute_charged(&self, req: Req, buffer: bool) -> Result<Reply> {
        if !req.chargeable() {
            return self.execute(req, buffer).await;
        }
        crate::runtime::check()?;
        let op = req.op;
        let (reservation, read_prices) = self
            .cancellable(op, self.reserve_consulta(op, false, &req.chave))
            .await?;
        let slot = self.cancellable(op, self.slot(&req)).await?;
        let span = call_span(&req);
        let this = self.clone();
        self.spawn_purchase(op, move |left, reply| {
            async move {
                let call = Attempts {
                    req,
                    buffer,
                    reservation,
                    slot: Some(slot),
                    left: Some(left),
                };
                let _ = reply.send(this.buy(call, read_prices).await);
            }
            .instrument(span)
        })
        .await
    }

    /// The retry loop of a purchase, with the prices read alongside when `read_prices`.
    pub(crate) async fn buy(&self, call: Attempts, read_prices: bool) -> Result<Reply> {
        if !read_prices {
            return self.attempts(call).await;
        }
        let op = call.req.op;
        let (reply, precos) = crate::join::both(self.attempts(call), self.precos()).await;
        if let Err(e) = precos {
            tracing::debug!(target: "carapi_sdk::spend", operation = op.name(), error = %e, "preços desconhecidos: consulta contada sem preço");
            if reply.as_ref().err().is_some_and(Error::may_have_charged) {
                crate::spend::warn_money(
                    op,
                    None,
                    "resposta perdida de consulta cobrável, preço desconhecido: pode ter sido cobrada",
                );
            }
        }
        reply
    }

    /// Spawns `work` in a task the client tracks and waits for its reply. `work` gets a token
    /// cancelled when this call is dropped (its caller left), and the sender of its reply
    /// (which it may use before it ends: an answer returned before its append commits).
    pub(crate) async fn spawn_purchase<T, F>(
        &self,
        op: Op,
        work: impl FnOnce(CancellationToken, ReplyTo<T>) -> F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let left = CancellationToken::new();
        let caller = left.clone().drop_guard();
        let (reply, answer) = oneshot::channel();
        self.inner.tasks.spawn(work(left, reply));
        let result = answer.await;
        caller.disarm();
        result.unwrap_or(Err(Error::Interrupted {
            operation: op.name(),
        }))
    }
}
