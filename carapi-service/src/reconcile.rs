//! The reconciliation job (contract, "Events" 1): every interval (2 minutes by default) it asks
//! the PSP about pending top-ups and confirms the ones paid with their amount through the same
//! function as the webhook ([`confirm_by_psp`]), so a top-up is credited once whichever
//! arrives first.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::pix::PixProvider;
use crate::pix::webhook::{ConfirmationError, Outcome, confirm_by_psp};
use crate::state::AppState;
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
    let mut creditadas = 0;
    for recarga in store.pending_recargas(BATCH).await? {
        let pid = &recarga.payment_id;
        match confirm_by_psp(store.as_ref(), pix.as_ref(), pid, None).await {
            Ok(Outcome::Creditada(r)) => {
                tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada pela reconciliação");
                creditadas += 1;
            }
            Ok(_) => {}
            Err(ConfirmationError::Store(e)) => return Err(e),
            Err(ConfirmationError::Pix(e)) => {
                tracing::warn!(erro = %e, payment_id = %pid, "falha ao consultar o PSP")
            }
        }
    }
    Ok(creditadas)
}

/// Name of the reconciliation job's lease (see [`run_loop`]).
pub const TASK: &str = "reconciliacao";

/// Runs [`run_once`] every `intervalo` until `cancelar` fires; also trims the rate limiters
/// (per key and per address: idle entries are forgotten).
///
/// Every server process runs this loop; with several processes on one database, a pass runs
/// only in the process holding the job's lease ([`crate::store::CoordinationStore`]), taken for
/// two intervals and renewed by its holder at each pass: one process does the work, and
/// another takes over at most two intervals after it stops.
pub async fn run_loop(st: AppState, intervalo: Duration, cancelar: CancellationToken) {
    let dono = uuid::Uuid::new_v4().to_string();
    let mut tick = tokio::time::interval(intervalo.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancelar.cancelled() => break,
            _ = tick.tick() => {
                if turn_of(&st, &dono, intervalo).await
                    && let Err(e) = run_once(&st.store, &st.pix).await
                {
                    tracing::error!(erro = %e, "reconciliação falhou");
                }
                if let Some(l) = &st.limiter {
                    l.clear();
                }
                if let Some(l) = &st.ip_limiter {
                    l.clear();
                }
            }
        }
    }
}

/// Takes or renews the reconciliation lease for `dono`; false when another process holds it
/// (or the store failed, logged).
async fn turn_of(st: &AppState, dono: &str, intervalo: Duration) -> bool {
    let now = st.clock.now();
    let ate = now + chrono::Duration::from_std(intervalo * 2).unwrap_or(chrono::Duration::MAX);
    match st.store.reserve_task(TASK, dono, now, ate).await {
        Ok(vez) => vez,
        Err(e) => {
            tracing::error!(erro = %e, "reserva da reconciliação falhou");
            false
        }
    }
}
