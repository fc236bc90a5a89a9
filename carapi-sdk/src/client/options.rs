//! The settings of a handle's calls ([`CallOptions`]) and the `with_*` methods that make such a
//! handle: a time-out, a cancellation token, and, with an archive, the freshness, the commit and
//! the purge override. Also [`Client::close`].

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Client, Op};
use crate::Result;

/// What a handle ([`Client::with_timeout`], [`Client::with_cancel`], …) sets for its calls;
/// the default handle sets nothing.
#[derive(Clone, Default)]
pub(crate) struct CallOptions {
    /// Per-attempt time-out instead of the builder's.
    pub(crate) timeout: Option<Duration>,
    /// Cancels this handle's calls that were not sent yet.
    pub(crate) cancel: Option<CancellationToken>,
    /// Instead of the archive policy's freshness.
    #[cfg(feature = "archive")]
    pub(crate) freshness: Option<crate::archive::Freshness>,
    /// Whether a bought answer is returned before or after its entry commits.
    #[cfg(feature = "archive")]
    pub(crate) commit: crate::archive::Commit,
    /// Owner lookups of documents purged from the archive are sent anyway.
    #[cfg(feature = "archive")]
    pub(crate) purged_allowed: bool,
}

impl Client {
    /// A handle on the same client whose calls give up when `token` is cancelled, as long as
    /// they were not sent: a call waiting for the spend guard, the rate limiter, the archive or
    /// another process's purchase of the same key returns [`Error::Cancelled`](crate::Error::Cancelled) and sends
    /// nothing (its place in the limiter goes to the next call). A charged lookup already sent
    /// runs to its end in a task the client owns, and its answer is counted (and archived);
    /// its caller gets its result. For callers that cannot drop the future, e.g. a thread
    /// blocked in a [`blocking`](crate) call on behalf of an `asyncio` task.
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) {
    /// let token = carapi_sdk::CancellationToken::new();
    /// let handle = client.with_cancel(token.clone());
    /// token.cancel(); // e.g. from another task
    /// let e = handle.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47").await.unwrap_err();
    /// assert!(matches!(e, carapi_sdk::Error::Cancelled { .. }));
    /// # }
    /// ```
    #[must_use]
    pub fn with_cancel(&self, token: CancellationToken) -> Client {
        let mut c = self.clone();
        c.call.cancel = Some(token);
        c
    }

    /// Waits until every purchase this client (and its clones) sent has ended: its answer
    /// received, counted in [`Client::gasto`] and, with an archive, committed. At most the
    /// longer of the builder's time-out and receipt time-out; returns how many purchases were
    /// still running then (0 when all ended). Calls made afterwards work as before.
    ///
    /// A purchase runs in a task of the runtime it was made on, so that a dropped call (a
    /// time-out, a `select!`, a client that went away) still keeps what it paid for. A program
    /// that ends without `close` (returning from `main` while lookups run, a runtime shut
    /// down) drops those tasks, as a crash would: an answer paid but not yet archived is then
    /// lost, and bought again by the next lookup of its key (see "Cost" in
    /// [`archive`](crate#cargo-features)). The [`blocking`](crate) client's drop calls it.
    pub async fn close(&self) -> usize {
        let tasks = &self.inner.tasks;
        // A closed tracker still tracks new tasks; `wait` then ends whenever none is left.
        tasks.close();
        let limit = self.inner.timeout.max(self.inner.receipt_timeout);
        let ended = tokio::time::timeout(limit, tasks.wait()).await.is_ok();
        if ended { 0 } else { tasks.len() }
    }

    /// `fut`, unless this handle's cancellation token is cancelled first
    /// ([`Error::Cancelled`](crate::Error::Cancelled)).
    pub(crate) async fn cancellable<T>(
        &self,
        op: Op,
        fut: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        super::http::until_left(op, self.call.cancel.as_ref(), fut).await
    }
}
