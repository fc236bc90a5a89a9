//! The PSP's payment webhook: payload and HMAC-SHA256 signature (the contract leaves path,
//! payload and signature to the implementation).
//!
//! `POST /webhooks/pix` with a JSON [`EventoPix`] body and the header
//! `X-Carapi-Signature: sha256=<hex HMAC-SHA256 of the raw body with the webhook secret>`.
//! A missing or wrong signature is refused with 401 and changes nothing.
//!
//! No secret is built in: unless the operator sets one (`CARAPI_WEBHOOK_SECRET`), each database
//! gets its own on first start ([`segredo_do_banco`]). And a signed webhook is only a hint: the
//! top-up is credited only when the provider's own record says the charge is paid, for the
//! amount of the top-up ([`confirmar_pelo_psp`]; reconciliation uses the same function).

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::pix::{PixError, PixProvider, SituacaoPagamento};
use crate::store::{Confirmacao, Recarga, Store, StoreError};

/// Name of the signature header.
pub const CABECALHO_ASSINATURA: &str = "x-carapi-signature";

/// The webhook body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventoPix {
    /// The PSP's payment id.
    pub payment_id: String,
    /// `"pago"` confirms the payment; other values are acknowledged and ignored.
    pub status: String,
    /// When the payer paid.
    #[serde(default)]
    pub pago_em: Option<DateTime<Utc>>,
}

impl EventoPix {
    /// A payment confirmation of `payment_id`.
    pub fn pago(payment_id: impl Into<String>, em: DateTime<Utc>) -> Self {
        EventoPix {
            payment_id: payment_id.into(),
            status: "pago".into(),
            pago_em: Some(em),
        }
    }
}

/// Key of the webhook secret in the `configuracao` table.
pub const CHAVE_SEGREDO: &str = "webhook_secret";

/// A new secret: 32 bytes from the thread-local CSPRNG (seeded by the OS), in hex (64
/// characters).
pub fn gerar_segredo() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The database's webhook secret, generated and stored on first use (atomically: concurrent
/// first uses, in this process or another, all get the one that was stored).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub async fn segredo_do_banco(store: &dyn Store) -> Result<String, StoreError> {
    store
        .configuracao_ou_inserir(CHAVE_SEGREDO, &gerar_segredo())
        .await
}

/// What a payment confirmation (webhook or reconciliation) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desfecho {
    /// This call moved the top-up to `Confirmado` and credited amount plus bonus.
    Creditada(Recarga),
    /// The top-up was already final; nothing changed.
    JaFinal(Recarga),
    /// The provider does not have the charge paid (pending or unknown to it); nothing changed.
    NaoPaga(Recarga),
    /// The provider has the charge paid for another amount; nothing changed (logged).
    ValorDivergente(Recarga),
    /// No top-up has this payment id.
    NaoEncontrada,
}

/// A failure while confirming: the store or the provider (retried by reconciliation).
#[derive(Debug, thiserror::Error)]
pub enum ErroConfirmacao {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The provider could not be asked.
    #[error(transparent)]
    Pix(#[from] PixError),
}

/// Credits the top-up of `payment_id` only if the provider's own record says its charge is
/// paid with the top-up's amount; the credit is the store's conditional transition
/// ([`crate::store::RecargasStore::confirmar_recarga`]), so repeats and races credit once. The
/// confirmation instant is `em`, or the provider's payment instant when `None`.
///
/// # Errors
/// [`ErroConfirmacao`] when the store or the provider fails (nothing changed).
pub async fn confirmar_pelo_psp(
    store: &dyn Store,
    pix: &dyn PixProvider,
    payment_id: &str,
    em: Option<DateTime<Utc>>,
) -> Result<Desfecho, ErroConfirmacao> {
    let Some(recarga) = store.recarga_por_payment_id(payment_id).await? else {
        return Ok(Desfecho::NaoEncontrada);
    };
    if recarga.status != carapi_sdk::RecargaStatus::Pendente {
        return Ok(Desfecho::JaFinal(recarga));
    }
    let pago_em = match pix.consultar(payment_id).await? {
        SituacaoPagamento::Pago { valor, .. } if valor != recarga.valor => {
            tracing::warn!(%payment_id, pago = %valor, esperado = %recarga.valor,
                "PSP registra pagamento de outro valor; nada creditado");
            return Ok(Desfecho::ValorDivergente(recarga));
        }
        SituacaoPagamento::Pago { em, .. } => em,
        SituacaoPagamento::Pendente | SituacaoPagamento::Desconhecido => {
            return Ok(Desfecho::NaoPaga(recarga));
        }
    };
    Ok(
        match store
            .confirmar_recarga(payment_id, em.unwrap_or(pago_em))
            .await?
        {
            Confirmacao::Creditada(r) => Desfecho::Creditada(r),
            Confirmacao::JaFinal(r) => Desfecho::JaFinal(r),
            Confirmacao::NaoEncontrada => Desfecho::NaoEncontrada,
        },
    )
}

fn mac(segredo: &str) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(segredo.as_bytes()).expect("HMAC accepts keys of any length")
}

/// The header value signing `corpo`: `sha256=<hex>`.
pub fn assinar(segredo: &str, corpo: &[u8]) -> String {
    let mut m = mac(segredo);
    m.update(corpo);
    format!("sha256={}", hex::encode(m.finalize().into_bytes()))
}

/// True when `cabecalho` is a valid signature of `corpo` (constant-time comparison).
pub fn verificar(segredo: &str, corpo: &[u8], cabecalho: &str) -> bool {
    let Some(hexa) = cabecalho.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Ok(bytes) = hex::decode(hexa) else {
        return false;
    };
    let mut m = mac(segredo);
    m.update(corpo);
    m.verify_slice(&bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_hex_of_32_bytes() {
        let (a, b) = (gerar_segredo(), gerar_segredo());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn signs_and_verifies() {
        let corpo = br#"{"paymentId":"PIX1","status":"pago"}"#;
        let s = assinar("segredo", corpo);
        assert!(verificar("segredo", corpo, &s));
        assert!(!verificar("outro", corpo, &s));
        assert!(!verificar("segredo", b"{}", &s));
        assert!(!verificar("segredo", corpo, "sha256=zz"));
        assert!(!verificar("segredo", corpo, &s.replace("sha256=", "")));
    }
}
