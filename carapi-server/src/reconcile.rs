//! The reconciliation job (contract, "Events" 1): every interval (2 minutes by default) it asks
//! the PSP about pending top-ups and confirms the paid ones through the same conditional
//! transition as the webhook, so a top-up is credited once whichever arrives first.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::pix::{PixProvider, SituacaoPagamento};
use crate::state::AppState;
use crate::store::{Confirmacao, Store, StoreError};

/// Pending top-ups examined per pass.
const LOTE: u32 = 500;

/// One pass: returns how many top-ups this pass credited.
///
/// # Errors
/// [`StoreError`] when the store fails (PSP failures are logged and retried next pass).
pub async fn executar(
    store: &Arc<dyn Store>,
    pix: &Arc<dyn PixProvider>,
) -> Result<u32, StoreError> {
    let mut creditadas = 0;
    for recarga in store.recargas_pendentes(LOTE).await? {
        match pix.consultar(&recarga.payment_id).await {
            Ok(SituacaoPagamento::Pago(em)) => {
                if let Confirmacao::Creditada(r) =
                    store.confirmar_recarga(&recarga.payment_id, em).await?
                {
                    tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada pela reconciliação");
                    creditadas += 1;
                }
            }
            Ok(SituacaoPagamento::Pendente) => {}
            Ok(SituacaoPagamento::Desconhecido) => {
                tracing::warn!(payment_id = %recarga.payment_id, "PSP não conhece a cobrança")
            }
            Err(e) => {
                tracing::warn!(erro = %e, payment_id = %recarga.payment_id, "falha ao consultar o PSP")
            }
        }
    }
    Ok(creditadas)
}

/// Runs [`executar`] every `intervalo` until `cancelar` fires; also trims the rate limiter.
pub async fn laco(st: AppState, intervalo: Duration, cancelar: CancellationToken) {
    let mut tick = tokio::time::interval(intervalo.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancelar.cancelled() => break,
            _ = tick.tick() => {
                if let Err(e) = executar(&st.store, &st.pix).await {
                    tracing::error!(erro = %e, "reconciliação falhou");
                }
                if let Some(l) = &st.limitador {
                    l.limpar();
                }
            }
        }
    }
}
