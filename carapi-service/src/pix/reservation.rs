//! Creating a top-up: reuse is decided before the provider is called, atomically (contract,
//! "Top-up state machine": reuse means "no new payment").
//!
//! 1. In one store transaction ([`insert_recarga`]): either a reusable top-up exists
//!    (same account and amount, pending, created within 10 minutes; one still being created
//!    counts) or a new row is inserted *being created* (empty BR Code) under its unique
//!    payment id. N concurrent identical requests, in one process or several, insert one row.
//! 2. Only the request that inserted the row asks the provider for the charge, then fills the
//!    BR Code in ([`complete_recarga`]). A provider failure deletes the row
//!    ([`discard_recarga`]): nothing is left to reuse.
//! 3. A request that found a row still being created waits (polling the row) until it is
//!    filled in, or gone (the provider failed: `ERRO_PIX` for it too).
//!
//! [`insert_recarga`]: crate::store::RecargasStore::inserir_recarga
//! [`complete_recarga`]: crate::store::RecargasStore::completar_recarga
//! [`discard_recarga`]: crate::store::RecargasStore::descartar_recarga

use std::time::Duration;

use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};

use super::{CobrancaRequest, PixError, PixProvider, new_payment_id};
use crate::money::Centavos;
use crate::money::recarga;
use crate::store::{ContaId, Recarga, Store, StoreError};

/// Longest wait for the provider to create a charge; a row still being created after this is
/// taken as abandoned (its process died mid-call) and no longer reused
/// ([`crate::store::CREATION_DEADLINE_S`]).
pub(crate) const PSP_DEADLINE: Duration =
    Duration::from_secs(crate::store::CREATION_DEADLINE_S as u64);
/// Interval between two reads of a row being created by another request.
const WAIT_INTERVAL: Duration = Duration::from_millis(10);

/// A top-up to create or reuse.
#[derive(Debug, Clone)]
pub(crate) struct RecargaRequest {
    /// The account.
    pub(crate) conta: ContaId,
    /// Amount paid (already validated: positive, within the contract's bounds).
    pub(crate) valor: Centavos,
    /// Payer's CPF/CNPJ.
    pub(crate) documento: CpfCnpj,
    /// Payer's e-mail.
    pub(crate) email: Option<String>,
    /// Now.
    pub(crate) now: DateTime<Utc>,
}

/// Why no top-up could be returned.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecargaError {
    /// The provider failed (or timed out), for this request or for the one it waited on
    /// (502 `ERRO_PIX`); nothing was left behind.
    #[error(transparent)]
    Pix(#[from] PixError),
    /// The store failed (500).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The top-up for `pedido` and whether it was reused (`reaproveitada`). Exactly one provider
/// charge per reusable top-up, whatever the concurrency.
///
/// # Errors
/// [`RecargaError::Pix`] when the provider fails; [`RecargaError::Store`].
pub(crate) async fn create_or_reuse(
    store: &dyn Store,
    pix: &dyn PixProvider,
    requested: RecargaRequest,
) -> Result<(Recarga, bool), RecargaError> {
    let now = requested.now;
    let fresh = recarga::new_recarga(requested.conta, requested.valor, new_payment_id(), now);
    let since = recarga::since_reuse(now);
    let (recarga, reaproveitada) = store.insert_recarga(fresh, since).await?;
    if reaproveitada {
        return Ok((wait_until_ready(store, recarga).await?, true));
    }
    let cobranca = CobrancaRequest {
        payment_id: recarga.payment_id.clone(),
        valor: recarga.valor,
        documento: requested.documento,
        email: requested.email,
        at: now,
    };
    let created = match tokio::time::timeout(PSP_DEADLINE, pix.create_charge(cobranca)).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(discard(store, &recarga, e).await),
        Err(_) => {
            let e = PixError("o provedor não respondeu no prazo".into());
            return Err(discard(store, &recarga, e).await);
        }
    };
    store.complete_recarga(recarga.id, &created.qr_code).await?;
    Ok((
        Recarga {
            qr_code: created.qr_code,
            ..recarga
        },
        false,
    ))
}

/// Deletes the row being created after a provider failure; returns the error to answer.
async fn discard(store: &dyn Store, recarga: &Recarga, e: PixError) -> RecargaError {
    match store.discard_recarga(recarga.id).await {
        Ok(()) => RecargaError::Pix(e),
        Err(s) => {
            tracing::error!(erro = %s, recarga = %recarga.id, "falha ao descartar recarga sem cobrança");
            RecargaError::Pix(e)
        }
    }
}

/// `recarga` once its BR Code is filled in by the request creating it.
async fn wait_until_ready(store: &dyn Store, recarga: Recarga) -> Result<Recarga, RecargaError> {
    if !recarga.being_created() {
        return Ok(recarga);
    }
    let limite = tokio::time::Instant::now() + PSP_DEADLINE;
    while tokio::time::Instant::now() < limite {
        tokio::time::sleep(WAIT_INTERVAL).await;
        match store.recarga_by_id(recarga.id).await? {
            Some(r) if !r.being_created() => return Ok(r),
            Some(_) => {}
            None => {
                return Err(PixError("a cobrança concorrente do mesmo valor falhou".into()).into());
            }
        }
    }
    Err(PixError("o provedor não respondeu no prazo".into()).into())
}
