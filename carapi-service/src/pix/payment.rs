//! The payer and the provider, played by the simulated PSP: mark a charge paid in its book and
//! deliver the signed payment webhook (`carapi-server pix pay`, the library, the test double).

use chrono::{DateTime, Utc};

use super::webhook::{self, PixEvent, SIGNATURE_HEADER};
use crate::error::ServerError;
use crate::store::Store;

/// Marks `payment_id` paid at `now` in the simulated PSP's book in `store`, without any
/// webhook: only a status query (reconciliation) will see it.
///
/// # Errors
/// [`ServerError::NaoEncontrado`] for a payment the PSP does not know; [`ServerError::Store`].
pub async fn mark_paid(
    store: &dyn Store,
    payment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServerError> {
    if store.psp_pay(payment_id, now).await? {
        Ok(())
    } else {
        Err(ServerError::NaoEncontrado(format!(
            "cobrança PIX {payment_id}"
        )))
    }
}

/// Marks `payment_id` paid at `now` in the simulated PSP's book in `store` and delivers the
/// signed webhook to `base_url` (`carapi-server pix pay`). The server credits only what the
/// provider's book has paid, so the book is written first. `webhook_secret` is the server's
/// configured secret, or `None` for the database's own ([`webhook::database_secret`]).
///
/// # Errors
/// [`ServerError::NaoEncontrado`] for a payment the PSP does not know;
/// [`ServerError::Webhook`] when the delivery fails or is refused.
pub async fn pay_via_webhook(
    store: &dyn Store,
    base_url: &str,
    webhook_secret: Option<&str>,
    payment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServerError> {
    mark_paid(store, payment_id, now).await?;
    let webhook_secret = match webhook_secret {
        Some(s) => s.to_owned(),
        None => webhook::database_secret(store).await?,
    };
    let corpo = serde_json::to_vec(&PixEvent::pago(payment_id, now))
        .map_err(|e| ServerError::Webhook(e.to_string()))?;
    let url = format!("{}/webhooks/pix", base_url.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .post(&url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            SIGNATURE_HEADER,
            webhook::sign(&webhook_secret, &corpo, now),
        )
        .body(corpo)
        .send()
        .await
        .map_err(|e| ServerError::Webhook(format!("POST {url}: {e}")))?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else if status == reqwest::StatusCode::NOT_FOUND {
        Err(ServerError::NaoEncontrado(format!(
            "recarga com paymentId {payment_id}"
        )))
    } else {
        let texto = resp.text().await.unwrap_or_default();
        Err(ServerError::Webhook(format!("{status}: {texto}")))
    }
}
