//! Creating a top-up: reuse is decided before the provider is called, atomically (contract,
//! "Top-up state machine": reuse means "no new payment").
//!
//! 1. In one store transaction ([`inserir_recarga`]): either a reusable top-up exists
//!    (same account and amount, pending, created within 10 minutes; one still being created
//!    counts) or a new row is inserted *being created* (empty BR Code) under its unique
//!    payment id. N concurrent identical requests, in one process or several, insert one row.
//! 2. Only the request that inserted the row asks the provider for the charge, then fills the
//!    BR Code in ([`completar_recarga`]). A provider failure deletes the row
//!    ([`descartar_recarga`]): nothing is left to reuse.
//! 3. A request that found a row still being created waits (polling the row) until it is
//!    filled in, or gone (the provider failed: `ERRO_PIX` for it too).
//!
//! [`inserir_recarga`]: crate::store::RecargasStore::inserir_recarga
//! [`completar_recarga`]: crate::store::RecargasStore::completar_recarga
//! [`descartar_recarga`]: crate::store::RecargasStore::descartar_recarga

use std::time::Duration;

use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};

use super::{PedidoCobranca, PixError, PixProvider, novo_payment_id};
use crate::money::Centavos;
use crate::money::recarga;
use crate::store::{ContaId, Recarga, Store, StoreError};

/// Longest wait for the provider to create a charge; a row still being created after this is
/// taken as abandoned (its process died mid-call) and no longer reused
/// ([`crate::store::PRAZO_CRIACAO_S`]).
pub const PRAZO_PSP: Duration = Duration::from_secs(crate::store::PRAZO_CRIACAO_S as u64);
/// Interval between two reads of a row being created by another request.
const INTERVALO_ESPERA: Duration = Duration::from_millis(10);

/// A top-up to create or reuse.
#[derive(Debug, Clone)]
pub struct PedidoRecarga {
    /// The account.
    pub conta: ContaId,
    /// Amount paid (already validated: positive, within the contract's bounds).
    pub valor: Centavos,
    /// Payer's CPF/CNPJ.
    pub documento: CpfCnpj,
    /// Payer's e-mail.
    pub email: Option<String>,
    /// Now.
    pub agora: DateTime<Utc>,
}

/// Why no top-up could be returned.
#[derive(Debug, thiserror::Error)]
pub enum ErroRecarga {
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
/// [`ErroRecarga::Pix`] when the provider fails; [`ErroRecarga::Store`].
pub async fn criar_ou_reaproveitar(
    store: &dyn Store,
    pix: &dyn PixProvider,
    pedido: PedidoRecarga,
) -> Result<(Recarga, bool), ErroRecarga> {
    let agora = pedido.agora;
    let nova = recarga::nova_recarga(pedido.conta, pedido.valor, novo_payment_id(), agora);
    let desde = recarga::desde_reuso(agora);
    let (recarga, reaproveitada) = store.inserir_recarga(nova, desde).await?;
    if reaproveitada {
        return Ok((esperar_pronta(store, recarga).await?, true));
    }
    let cobranca = PedidoCobranca {
        payment_id: recarga.payment_id.clone(),
        valor: recarga.valor,
        documento: pedido.documento,
        email: pedido.email,
        em: agora,
    };
    let criada = match tokio::time::timeout(PRAZO_PSP, pix.criar_cobranca(cobranca)).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => return Err(descartar(store, &recarga, e).await),
        Err(_) => {
            let e = PixError("o provedor não respondeu no prazo".into());
            return Err(descartar(store, &recarga, e).await);
        }
    };
    store.completar_recarga(recarga.id, &criada.qr_code).await?;
    Ok((
        Recarga {
            qr_code: criada.qr_code,
            ..recarga
        },
        false,
    ))
}

/// Deletes the row being created after a provider failure; returns the error to answer.
async fn descartar(store: &dyn Store, recarga: &Recarga, e: PixError) -> ErroRecarga {
    match store.descartar_recarga(recarga.id).await {
        Ok(()) => ErroRecarga::Pix(e),
        Err(s) => {
            tracing::error!(erro = %s, recarga = %recarga.id, "falha ao descartar recarga sem cobrança");
            ErroRecarga::Pix(e)
        }
    }
}

/// `recarga` once its BR Code is filled in by the request creating it.
async fn esperar_pronta(store: &dyn Store, recarga: Recarga) -> Result<Recarga, ErroRecarga> {
    if !recarga.em_criacao() {
        return Ok(recarga);
    }
    let limite = tokio::time::Instant::now() + PRAZO_PSP;
    while tokio::time::Instant::now() < limite {
        tokio::time::sleep(INTERVALO_ESPERA).await;
        match store.recarga_por_id(recarga.id).await? {
            Some(r) if !r.em_criacao() => return Ok(r),
            Some(_) => {}
            None => {
                return Err(PixError("a cobrança concorrente do mesmo valor falhou".into()).into());
            }
        }
    }
    Err(PixError("o provedor não respondeu no prazo".into()).into())
}
