//! `POST /webhooks/pix`: payment confirmation from the PSP (outside `/v1`, authenticated by an
//! HMAC-SHA256 signature instead of a bearer key; see [`crate::webhook`]).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use carapi_sdk::{ApiErrorBody, ErrorCode};
use serde::Serialize;
use uuid::Uuid;

use super::error::ApiError;
use crate::state::AppState;
use crate::store::Confirmacao;
use crate::webhook::{CABECALHO_ASSINATURA, EventoPix, verificar};

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new().route("/webhooks/pix", post(receber))
}

/// Acknowledgement of a webhook.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookAck {
    /// Always true.
    pub success: bool,
    /// The top-up concerned, when known.
    pub recarga_id: Option<Uuid>,
    /// True when this delivery credited the balance (false for repeats and ignored events).
    pub creditada: bool,
    /// What happened.
    pub message: String,
}

/// `POST /webhooks/pix`.
#[utoipa::path(post, path = "/webhooks/pix", tag = "webhooks",
    request_body = EventoPix,
    params(("X-Carapi-Signature" = String, Header, description = "`sha256=<hex HMAC-SHA256 of the raw body>`")),
    responses(
        (status = 200, description = "Acknowledged; `creditada` is true for the delivery that credited", body = WebhookAck),
        (status = 401, description = "`TOKEN_INVALIDO`: signature missing or wrong", body = ApiErrorBody),
        (status = 400, description = "`PARAMETRO_INVALIDO`: a signed body that is not an event", body = ApiErrorBody),
        (status = 404, description = "`RECARGA_NAO_ENCONTRADA`: unknown payment id", body = ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = ApiErrorBody),
    ))]
pub async fn receber(
    State(st): State<AppState>,
    headers: HeaderMap,
    corpo: Bytes,
) -> Result<Json<WebhookAck>, ApiError> {
    let assinatura = headers
        .get(CABECALHO_ASSINATURA)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !verificar(&st.config.webhook_secret, &corpo, assinatura) {
        tracing::warn!("webhook PIX com assinatura inválida recusado");
        return Err(ApiError::com_status(
            StatusCode::UNAUTHORIZED,
            ErrorCode::TokenInvalido,
            format!(
                "Assinatura do webhook ausente ou inválida (cabeçalho {CABECALHO_ASSINATURA})."
            ),
        ));
    }
    let evento: EventoPix = serde_json::from_slice(&corpo)
        .map_err(|e| ApiError::parametro(format!("Evento de webhook inválido: {e}")))?;
    if !evento.status.eq_ignore_ascii_case("pago") {
        return Ok(Json(WebhookAck {
            success: true,
            recarga_id: None,
            creditada: false,
            message: format!("Evento {:?} ignorado.", evento.status),
        }));
    }
    let agora = st.relogio.agora();
    match st
        .store
        .confirmar_recarga(&evento.payment_id, agora)
        .await?
    {
        Confirmacao::Creditada(r) => {
            tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada por webhook");
            Ok(Json(WebhookAck {
                success: true,
                recarga_id: Some(r.id),
                creditada: true,
                message: "Pagamento confirmado; saldo creditado.".into(),
            }))
        }
        Confirmacao::JaFinal(r) => Ok(Json(WebhookAck {
            success: true,
            recarga_id: Some(r.id),
            creditada: false,
            message: format!("Recarga já estava {}; nada mudou.", r.status),
        })),
        Confirmacao::NaoEncontrada => Err(ApiError::new(
            ErrorCode::RecargaNaoEncontrada,
            "Nenhuma recarga com este paymentId.",
        )),
    }
}
