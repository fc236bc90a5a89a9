//! The reconciliation job (contract, "Events" 1): every interval (2 minutes by default) it asks
//! the PSP about pending top-ups and confirms the ones paid with their amount through the same
//! function as the webhook ([`confirm_by_psp`]), so a top-up is credited once whichever
//! arrives first.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::pix::PixProvider;
use crate::pix::webhook::{ConfirmationError, Outcome, confirm_by_psp};
use crate::store::{Store, StoreError};

/// Pending top-ups examined per pass.
const BATCH: u32 = 500;

/// One pass: returns how many top-ups this pass credited.
///
/// # Errors
/// [`StoreError`] when the store fails (PSP failures are logged and retried next pass).
pub async fn run_once(
    store: &Arc<dyn Store>,
    pix: &Arc<dyn PixProvider>,
) -> Result<u32, StoreError> {
    let mut credited = 0;
    for recarga in store.pending_recargas(BATCH).await? {
        let pid = &recarga.payment_id;
        match confirm_by_psp(store.as_ref(), pix.as_ref(), pid, None).await {
            Ok(Outcome::Credited(r)) => {
                tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada pela reconciliação");
                credited += 1;
            }
            Ok(_) => {}
            Err(ConfirmationError::Store(e)) => return Err(e),
            Err(ConfirmationError::Pix(e)) => {
                tracing::warn!(erro = %e, payment_id = %pid, "falha ao consultar o PSP")
            }
        }
    }
    Ok(credited)
}

/// Name of the reconciliation job's lease (see [`run_loop`]).
pub(crate) const TASK: &str = "reconciliacao";

/// One process's turn at reconciliation: several server processes on one database take turns
/// through a lease in the store ([`TASK`]), so a pass runs once per interval in all.
#[derive(Debug)]
pub(crate) struct Reconciler {
    store: Arc<dyn Store>,
    pix: Arc<dyn PixProvider>,
    clock: Clock,
    /// This process's name in the lease.
    owner: String,
}

impl Reconciler {
    /// The reconciler of `store` asking `pix`, on `clock`.
    pub(crate) fn new(store: Arc<dyn Store>, pix: Arc<dyn PixProvider>, clock: Clock) -> Self {
        Reconciler {
            store,
            pix,
            clock,
            owner: uuid::Uuid::new_v4().to_string(),
        }
    }

    /// Runs a pass when this process holds (or takes) the lease for the next two intervals;
    /// a failure is logged.
    pub(crate) async fn turn(&self, interval: Duration) {
        if self.turn_of(interval).await
            && let Err(e) = run_once(&self.store, &self.pix).await
        {
            tracing::error!(erro = %e, "reconciliação falhou");
        }
    }

    /// Takes or renews the lease; false when another process holds it (or the store failed,
    /// logged).
    async fn turn_of(&self, interval: Duration) -> bool {
        let now = self.clock.now();
        let until = now + chrono::Duration::from_std(interval * 2).unwrap_or(chrono::Duration::MAX);
        match self.store.reserve_task(TASK, &self.owner, now, until).await {
            Ok(time) => time,
            Err(e) => {
                tracing::error!(erro = %e, "reserva da reconciliação falhou");
                false
            }
        }
    }
}
