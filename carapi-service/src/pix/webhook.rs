//! The PSP's payment webhook: payload and HMAC-SHA256 signature (the contract leaves path,
//! payload and signature to the implementation).
//!
//! `POST /webhooks/pix` with a JSON [`PixEvent`] body and the header
//! `X-Carapi-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." and the raw body>`
//! (Stripe's scheme). A missing or wrong signature, or one more than
//! `SIGNATURE_TOLERANCE_S` from the server's clock (a replay), is refused with 401 and
//! changes nothing; a delivery within the window that repeats an earlier one credits nothing
//! more (the confirmation is a conditional transition).
//!
//! No secret is built in: unless the operator sets one (`CARAPI_WEBHOOK_SECRET`), each database
//! gets its own on first start ([`database_secret`]). And a signed webhook is only a hint: the
//! top-up is credited only when the provider's own record says the charge is paid, for the
//! amount of the top-up ([`confirm_by_psp`]; reconciliation uses the same function).

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::pix::{PaymentState, PixError, PixProvider};
use crate::store::{Confirmation, Recarga, Store, StoreError};

/// Name of the signature header.
pub const SIGNATURE_HEADER: &str = "x-carapi-signature";

/// The webhook body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = EventoPix))]
#[serde(rename_all = "camelCase")]
pub struct PixEvent {
    /// The PSP's payment id.
    pub payment_id: String,
    /// `"pago"` confirms the payment; other values are acknowledged and ignored.
    pub status: String,
    /// When the payer paid.
    #[serde(rename = "pagoEm")]
    #[serde(default)]
    pub paid_at: Option<DateTime<Utc>>,
}

impl PixEvent {
    /// A payment confirmation of `payment_id`.
    pub fn pago(payment_id: impl Into<String>, at: DateTime<Utc>) -> Self {
        PixEvent {
            payment_id: payment_id.into(),
            status: "pago".into(),
            paid_at: Some(at),
        }
    }
}

/// Key of the webhook secret in the `configuracao` table.
pub(crate) const SECRET_KEY: &str = "webhook_secret";

/// Fewest bytes of a configured webhook secret ([`crate::Config::webhook_secret`]): 256 bits
/// if it is random bytes, as a key of HMAC-SHA256 should be (RFC 2104 section 3: a key
/// shorter than the hash's output weakens it). The generated secret has 64.
pub(crate) const MIN_SECRET_LEN: usize = 32;

/// Refuses a configured webhook secret shorter than `MIN_SECRET_LEN` bytes (a blank one
/// means none: the database's own secret is used).
///
/// # Errors
/// [`crate::ServerError::Invalid`] with the reason.
pub fn validate_secret(secret: Option<&str>) -> Result<(), crate::ServerError> {
    match secret {
        Some(s) if !s.trim().is_empty() && s.len() < MIN_SECRET_LEN => {
            Err(crate::ServerError::Invalid(format!(
                "o segredo do webhook precisa de ao menos {MIN_SECRET_LEN} bytes (tem {})",
                s.len()
            )))
        }
        _ => Ok(()),
    }
}

/// A new secret: 32 bytes from the thread-local CSPRNG (seeded by the OS), in hex (64
/// characters).
pub(crate) fn generate_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The database's webhook secret, generated and stored on first use (atomically: concurrent
/// first uses, in this process or another, all get the one that was stored).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub async fn database_secret(store: &dyn Store) -> Result<String, StoreError> {
    store
        .settings_or_insert(SECRET_KEY, &generate_secret())
        .await
}

/// The database's webhook secret when it has one (a server started on it without a configured
/// secret created it); nothing is written (`carapi-server segredo-webhook`, `pix pagar`).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub async fn stored_secret(store: &dyn Store) -> Result<Option<String>, StoreError> {
    store.setting(SECRET_KEY).await
}

/// What a payment confirmation (webhook or reconciliation) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// This call moved the top-up to `Confirmado` and credited amount plus bonus.
    Credited(Recarga),
    /// The top-up was already final; nothing changed.
    AlreadyFinal(Recarga),
    /// The provider does not have the charge paid (pending or unknown to it); nothing changed.
    NotPaid(Recarga),
    /// The provider has the charge paid for another amount; nothing changed (logged).
    ValorMismatch(Recarga),
    /// No top-up has this payment id.
    NotFound,
}

/// A failure while confirming: the store or the provider (retried by reconciliation).
#[derive(Debug, thiserror::Error)]
pub enum ConfirmationError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The provider could not be asked.
    #[error(transparent)]
    Pix(#[from] PixError),
}

/// Credits the top-up of `payment_id` only if the provider's own record says its charge is
/// paid with the top-up's amount; the credit is the store's conditional transition
/// ([`crate::store::RecargasStore::confirm_recarga`]), so repeats and races credit once. The
/// confirmation instant is `em`, or the provider's payment instant when `None`.
///
/// # Errors
/// [`ConfirmationError`] when the store or the provider fails (nothing changed).
pub async fn confirm_by_psp(
    store: &dyn Store,
    pix: &dyn PixProvider,
    payment_id: &str,
    at: Option<DateTime<Utc>>,
) -> Result<Outcome, ConfirmationError> {
    let Some(recarga) = store.recarga_by_payment_id(payment_id).await? else {
        return Ok(Outcome::NotFound);
    };
    if recarga.status != carapi_sdk::RecargaStatus::Pendente {
        return Ok(Outcome::AlreadyFinal(recarga));
    }
    let paid_at = match pix.query(payment_id).await? {
        PaymentState::Pago { valor, .. } if valor != recarga.valor => {
            tracing::warn!(%payment_id, pago = %valor, esperado = %recarga.valor,
                "PSP registra pagamento de outro valor; nada creditado");
            return Ok(Outcome::ValorMismatch(recarga));
        }
        PaymentState::Pago { at, .. } => at,
        PaymentState::Pendente | PaymentState::Unknown => {
            return Ok(Outcome::NotPaid(recarga));
        }
    };
    Ok(
        match store
            .confirm_recarga(payment_id, at.unwrap_or(paid_at))
            .await?
        {
            Confirmation::Credited(r) => Outcome::Credited(r),
            Confirmation::AlreadyFinal(r) => Outcome::AlreadyFinal(r),
            Confirmation::NotFound => Outcome::NotFound,
        },
    )
}

fn mac(secret: &str) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length")
}

/// How far a signature's timestamp may be from the server's clock, in seconds (5 minutes, as
/// Stripe's webhooks): an older delivery is refused as a replay, even with a valid MAC.
pub(crate) const SIGNATURE_TOLERANCE_S: i64 = 300;

/// Why a webhook signature was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SignatureRefused {
    /// No header, or not `t=<unix seconds>,v1=<hex>`.
    #[error("cabeçalho de assinatura ausente ou malformado (esperado t=<segundos>,v1=<hex>)")]
    Malformed,
    /// The MAC does not match the timestamp and body.
    #[error("assinatura inválida")]
    Invalid,
    /// The timestamp is more than [`SIGNATURE_TOLERANCE_S`] away from the server's clock.
    #[error("assinatura fora da janela de {SIGNATURE_TOLERANCE_S} s (reenvio antigo?)")]
    OutsideWindow,
}

/// The header value signing `corpo` at `em`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
/// "<t>." followed by the raw body>` (the signed payload carries the timestamp, so a captured
/// delivery cannot be replayed after `SIGNATURE_TOLERANCE_S`).
pub fn sign(secret: &str, body: &[u8], at: DateTime<Utc>) -> String {
    let t = at.timestamp();
    let mac = mac_of(secret, t, body).finalize().into_bytes();
    format!("t={t},v1={}", hex::encode(mac))
}

/// The MAC state over the signed payload: `"<t>."` then the raw body.
fn mac_of(secret: &str, t: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut m = mac(secret);
    m.update(format!("{t}.").as_bytes());
    m.update(body);
    m
}

/// The timestamp and MAC of a signature header, when it has the form
/// `t=<unix seconds>,v1=<hex of 32 bytes>`.
fn parts_of(header: &str) -> Option<(i64, Vec<u8>)> {
    let mut t = None;
    let mut v1 = None;
    for part in header.trim().split(',') {
        match part.trim().split_once('=') {
            Some(("t", valor)) => t = valor.parse::<i64>().ok(),
            Some(("v1", valor)) => v1 = hex::decode(valor).ok().filter(|m| m.len() == 32),
            _ => {}
        }
    }
    Some((t?, v1?))
}

/// What can be checked of `header` before the body arrives: its form and that its timestamp is
/// within [`SIGNATURE_TOLERANCE_S`] of `now` (the MAC covers the body: [`check`]).
///
/// # Errors
/// [`SignatureRefused::Malformed`] or [`SignatureRefused::OutsideWindow`].
pub(crate) fn check_form(header: &str, now: DateTime<Utc>) -> Result<(), SignatureRefused> {
    let (t, _) = parts_of(header).ok_or(SignatureRefused::Malformed)?;
    if (now.timestamp() - t).abs() > SIGNATURE_TOLERANCE_S {
        return Err(SignatureRefused::OutsideWindow);
    }
    Ok(())
}

/// Checks that `header` signs `corpo` (constant-time comparison of the MAC) with a timestamp
/// within [`SIGNATURE_TOLERANCE_S`] of `now`.
///
/// # Errors
/// [`SignatureRefused`] saying why the signature is refused.
pub(crate) fn check(
    secret: &str,
    body: &[u8],
    header: &str,
    now: DateTime<Utc>,
) -> Result<(), SignatureRefused> {
    let (t, v1) = parts_of(header).ok_or(SignatureRefused::Malformed)?;
    mac_of(secret, t, body)
        .verify_slice(&v1)
        .map_err(|_| SignatureRefused::Invalid)?;
    if (now.timestamp() - t).abs() > SIGNATURE_TOLERANCE_S {
        return Err(SignatureRefused::OutsideWindow);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_hex_of_32_bytes() {
        let (a, b) = (generate_secret(), generate_secret());
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn signs_and_verifies_within_the_window() {
        let body = br#"{"paymentId":"PIX1","status":"pago"}"#;
        let now = Utc::now();
        let s = sign("segredo", body, now);
        assert!(s.starts_with(&format!("t={},v1=", now.timestamp())), "{s}");
        assert_eq!(check("segredo", body, &s, now), Ok(()));
        let inside = now + chrono::Duration::seconds(SIGNATURE_TOLERANCE_S);
        assert_eq!(check("segredo", body, &s, inside), Ok(()));
        assert_eq!(
            check("outro", body, &s, now),
            Err(SignatureRefused::Invalid)
        );
        assert_eq!(
            check("segredo", b"{}", &s, now),
            Err(SignatureRefused::Invalid)
        );
        assert_eq!(
            check("segredo", body, "t=1,v1=zz", now),
            Err(SignatureRefused::Malformed)
        );
    }

    #[test]
    fn an_old_or_future_signature_is_a_replay_even_with_a_valid_mac() {
        let body = br#"{"paymentId":"PIX1","status":"pago"}"#;
        let at = Utc::now();
        let s = sign("segredo", body, at);
        let outside = chrono::Duration::seconds(SIGNATURE_TOLERANCE_S + 1);
        assert_eq!(
            check("segredo", body, &s, at + outside),
            Err(SignatureRefused::OutsideWindow)
        );
        assert_eq!(
            check("segredo", body, &s, at - outside),
            Err(SignatureRefused::OutsideWindow)
        );
    }

    #[test]
    fn the_timestamp_is_part_of_the_signed_payload() {
        let body = br#"{"paymentId":"PIX1","status":"pago"}"#;
        let at = Utc::now();
        let s = sign("segredo", body, at);
        // An old capture with its timestamp rewritten to now does not verify.
        let rewrite = s.replace(
            &format!("t={}", at.timestamp()),
            &format!("t={}", at.timestamp() + 1),
        );
        assert_eq!(
            check("segredo", body, &rewrite, at),
            Err(SignatureRefused::Invalid)
        );
        // The previous scheme (a MAC of the body alone) is refused.
        assert_eq!(
            check("segredo", body, "sha256=00", at),
            Err(SignatureRefused::Malformed)
        );
    }
}
