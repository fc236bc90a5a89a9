//! The PSP's payment webhook: payload and HMAC-SHA256 signature (the contract leaves path,
//! payload and signature to the implementation).
//!
//! `POST /webhooks/pix` with a JSON [`EventoPix`] body and the header
//! `X-Carapi-Signature: sha256=<hex HMAC-SHA256 of the raw body with the webhook secret>`.
//! A missing or wrong signature is refused with 401 and changes nothing.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Name of the signature header.
pub const CABECALHO_ASSINATURA: &str = "x-carapi-signature";

/// The webhook body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
