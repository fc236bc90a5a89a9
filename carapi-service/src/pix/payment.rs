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
/// [`ServerError::NotFound`] for a payment the PSP does not know; [`ServerError::Store`].
pub async fn mark_paid(
    store: &dyn Store,
    payment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServerError> {
    if store.psp_pay(payment_id, now).await? {
        Ok(())
    } else {
        Err(unknown_charge(payment_id))
    }
}

/// Plays the payer and the provider for `payment_id` at `now` and delivers the signed webhook
/// to `base_url` (`carapi-server pix pagar`, the library, the test double), signing with
/// `webhook_secret`, the secret the server uses. The server credits only what the provider's
/// book has paid, so the book is written before the payment webhook, but only once the server
/// has accepted a signed event that changes nothing (`status` `"verificacao"`, which it
/// acknowledges and ignores): a wrong secret (401), a refusal (429) or an unreachable server
/// leaves the charge unpaid in the book.
///
/// # Errors
/// [`ServerError::NotFound`] for a payment the PSP does not know (nothing done), or that
/// the server does not know (the book then has it paid: reconciliation of a server on this
/// database credits it); [`ServerError::Webhook`] when the delivery fails or is refused (its
/// text says whether the book was written).
pub async fn pay_via_webhook(
    store: &dyn Store,
    base_url: &str,
    webhook_secret: &str,
    payment_id: &str,
    now: DateTime<Utc>,
) -> Result<(), ServerError> {
    if store.psp_state(payment_id).await?.is_none() {
        return Err(unknown_charge(payment_id));
    }
    let url = format!("{}/webhooks/pix", base_url.trim_end_matches('/'));
    let probe = PixEvent {
        status: PROBE_STATUS.to_owned(),
        ..PixEvent::pago(payment_id, now)
    };
    deliver(&url, webhook_secret, &probe, now)
        .await
        .map_err(|e| ServerError::Webhook(format!("{e}; nada foi pago")))?;
    mark_paid(store, payment_id, now).await?;
    match deliver(&url, webhook_secret, &PixEvent::pago(payment_id, now), now).await {
        Ok(()) => Ok(()),
        Err(Refusal::NotFound) => Err(ServerError::NotFound(format!(
            "recarga com paymentId {payment_id} no servidor {base_url} (a cobrança ficou paga \
             no PSP simulado deste banco)"
        ))),
        Err(e) => Err(ServerError::Webhook(format!(
            "{e}; a cobrança ficou paga no PSP simulado: a reconciliação do servidor a creditará \
             (ou repita o comando)"
        ))),
    }
}

/// `status` of the event [`pay_via_webhook`] sends first to learn that the server accepts its
/// signature: not `pago`, so the server acknowledges it and changes nothing.
pub(crate) const PROBE_STATUS: &str = "verificacao";

fn unknown_charge(payment_id: &str) -> ServerError {
    ServerError::NotFound(format!("cobrança PIX {payment_id}"))
}

/// Why a delivery was not acknowledged.
#[derive(Debug)]
enum Refusal {
    /// 404: no top-up with this payment id on the server.
    NotFound,
    /// Any other failure: the request's, or the status and body of the answer.
    Other(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotFound => f.write_str("404: recarga não encontrada no servidor"),
            Refusal::Other(s) => f.write_str(s),
        }
    }
}

/// POSTs `evento` signed with `secret` at `now` to `url`.
async fn deliver(
    url: &str,
    secret: &str,
    event: &PixEvent,
    now: DateTime<Utc>,
) -> Result<(), Refusal> {
    let body = serde_json::to_vec(event).map_err(|e| Refusal::Other(e.to_string()))?;
    let resp = reqwest::Client::new()
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, webhook::sign(secret, &body, now))
        .body(body)
        .send()
        .await
        .map_err(|e| Refusal::Other(format!("POST {url}: {e}")))?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else if status == reqwest::StatusCode::NOT_FOUND {
        Err(Refusal::NotFound)
    } else {
        let text = resp.text().await.unwrap_or_default();
        Err(Refusal::Other(format!("{status}: {text}")))
    }
}
