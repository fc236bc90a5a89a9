//! `POST /webhooks/pix`: payment confirmation from the PSP (outside `/v1`, authenticated by an
//! HMAC-SHA256 signature instead of a bearer key; see [`crate::pix::webhook`]). The webhook is only a
//! hint: the top-up is credited when the provider's own record has it paid with its amount.

use std::net::IpAddr;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use carapi_sdk::ErrorCode;
use serde::Serialize;
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::pix::webhook::{
    ConfirmationError, Outcome, PixEvent, SIGNATURE_HEADER, check, check_form, confirm_by_psp,
};
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new().route("/webhooks/pix", post(receive))
}

/// The body of a webhook, read only once its signature header has the form
/// `t=<seconds>,v1=<64 hex>` and a timestamp inside the window: a slow body without a plausible
/// signature is refused at once (401, or 429 past the per-address limit of failures: `ip` is
/// the client address) and holds no connection. The MAC itself covers the body and is checked
/// by [`receive`] once it arrived (within the edge's bounds).
async fn body_after_form(
    st: &AppState,
    req: Request,
    ip: Option<IpAddr>,
) -> Result<(String, Bytes), ApiError> {
    let signature = req
        .headers()
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if let Err(why) = check_form(&signature, st.clock.now()) {
        tracing::warn!(motivo = %why, "webhook PIX com assinatura recusada");
        return Err(super::unauthenticated(st, ip, refused(why)));
    }
    let req = super::edge::read_body(st, req).await?;
    let body = axum::body::to_bytes(req.into_body(), usize::MAX)
        .await
        .map_err(|_| ApiError::param("Corpo da requisição ilegível."))?;
    Ok((signature, body))
}

/// 401 `TOKEN_INVALIDO` for a refused signature.
fn refused(why: impl std::fmt::Display) -> ApiError {
    ApiError::with_status(
        StatusCode::UNAUTHORIZED,
        ErrorCode::TokenInvalido,
        format!("Webhook recusado (cabeçalho {SIGNATURE_HEADER}): {why}."),
    )
}

/// Acknowledgement of a webhook.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookAck {
    /// Always true.
    pub(crate) success: bool,
    /// The top-up concerned, when known.
    pub(crate) recarga_id: Option<Uuid>,
    /// True when this delivery credited the balance (false for repeats and ignored events).
    #[serde(rename = "creditada")]
    pub(crate) credited: bool,
    /// What happened.
    pub(crate) message: String,
}

/// `POST /webhooks/pix`.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/webhooks/pix", tag = "webhooks",
    request_body = PixEvent,
    params(("X-Carapi-Signature" = String, Header, description = "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.\" and the raw body>`; refused more than 300 s from the server's clock")),
    responses(
        (status = 200, description = "Acknowledged; `creditada` is true for the delivery that credited (only when the provider's record has the charge paid with the top-up's amount)", body = WebhookAck),
        (status = 401, description = "`TOKEN_INVALIDO`: signature missing or wrong", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: too many failed signatures (or API keys) from this client address", body = carapi_sdk::ApiErrorBody),
        (status = 400, description = "`PARAMETRO_INVALIDO`: a signed body that is not an event", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`RECARGA_NAO_ENCONTRADA`: unknown payment id", body = carapi_sdk::ApiErrorBody),
        (status = 502, description = "`ERRO_PIX`: the provider could not be asked; nothing changed", body = carapi_sdk::ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = carapi_sdk::ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn receive(
    State(st): State<AppState>,
    req: Request,
) -> Result<Json<WebhookAck>, ApiError> {
    // A failed signature counts toward its client address's limit of failed
    // authentications, as a wrong API key does (429 past it).
    let ip = super::client_addr::client_address(&req, &st.config.edge);
    let (signature, body) = body_after_form(&st, req, ip).await?;
    let now = st.clock.now();
    if let Err(why) = check(&st.webhook_secret().await?, &body, &signature, now) {
        tracing::warn!(motivo = %why, "webhook PIX com assinatura recusada");
        return Err(super::unauthenticated(&st, ip, refused(why)));
    }
    let event: PixEvent = serde_json::from_slice(&body).map_err(|_| {
        ApiError::param(
            "Evento de webhook inválido: esperado um objeto JSON com paymentId e status.",
        )
    })?;
    if !event.status.eq_ignore_ascii_case("pago") {
        return Ok(Json(WebhookAck {
            success: true,
            recarga_id: None,
            credited: false,
            message: format!("Evento {:?} ignorado.", event.status),
        }));
    }
    let outcome = confirm_by_psp(
        st.store.as_ref(),
        st.pix.as_ref(),
        &event.payment_id,
        Some(now),
    )
    .await
    .map_err(|e| match e {
        ConfirmationError::Store(e) => ApiError::from(e),
        ConfirmationError::Pix(e) => {
            tracing::warn!(erro = %e, "falha ao consultar o provedor PIX");
            ApiError::new(
                ErrorCode::ErroPix,
                "Falha ao consultar o provedor PIX; nada mudou.",
            )
        }
    })?;
    let (r, credited, message) = match outcome {
        Outcome::Credited(r) => {
            tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada por webhook");
            (r, true, "Pagamento confirmado; saldo creditado.".to_owned())
        }
        Outcome::AlreadyFinal(r) => {
            let m = format!("Recarga já estava {}; nada mudou.", r.status);
            (r, false, m)
        }
        Outcome::NotPaid(r) => (
            r,
            false,
            "O provedor não registra o pagamento desta cobrança; nada mudou.".into(),
        ),
        Outcome::ValorMismatch(r) => (
            r,
            false,
            "O provedor registra um pagamento de outro valor; nada mudou.".into(),
        ),
        Outcome::NotFound => {
            return Err(ApiError::new(
                ErrorCode::RecargaNaoEncontrada,
                "Nenhuma recarga com este paymentId.",
            ));
        }
    };
    Ok(Json(WebhookAck {
        success: true,
        recarga_id: Some(r.id),
        credited,
        message,
    }))
}
