//! `POST /webhooks/pix`: payment confirmation from the PSP (outside `/v1`, authenticated by an
//! HMAC-SHA256 signature instead of a bearer key; see [`crate::webhook`]). The webhook is only a
//! hint: the top-up is credited when the provider's own record has it paid with its amount.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use carapi_sdk::ErrorCode;
use serde::Serialize;
use uuid::Uuid;

use super::error::ApiError;
use crate::state::AppState;
use crate::webhook::{
    CABECALHO_ASSINATURA, Desfecho, ErroConfirmacao, EventoPix, confirmar_pelo_psp, verificar,
};

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new().route("/webhooks/pix", post(receber))
}

/// Acknowledgement of a webhook.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/webhooks/pix", tag = "webhooks",
    request_body = EventoPix,
    params(("X-Carapi-Signature" = String, Header, description = "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.\" and the raw body>`; refused more than 300 s from the server's clock")),
    responses(
        (status = 200, description = "Acknowledged; `creditada` is true for the delivery that credited (only when the provider's record has the charge paid with the top-up's amount)", body = WebhookAck),
        (status = 401, description = "`TOKEN_INVALIDO`: signature missing or wrong", body = carapi_sdk::ApiErrorBody),
        (status = 400, description = "`PARAMETRO_INVALIDO`: a signed body that is not an event", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`RECARGA_NAO_ENCONTRADA`: unknown payment id", body = carapi_sdk::ApiErrorBody),
        (status = 502, description = "`ERRO_PIX`: the provider could not be asked; nothing changed", body = carapi_sdk::ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = carapi_sdk::ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn receber(
    State(st): State<AppState>,
    headers: HeaderMap,
    corpo: Bytes,
) -> Result<Json<WebhookAck>, ApiError> {
    let assinatura = headers
        .get(CABECALHO_ASSINATURA)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let agora = st.relogio.agora();
    if let Err(motivo) = verificar(&st.segredo_webhook().await?, &corpo, assinatura, agora) {
        tracing::warn!(%motivo, "webhook PIX com assinatura recusada");
        return Err(ApiError::com_status(
            StatusCode::UNAUTHORIZED,
            ErrorCode::TokenInvalido,
            format!("Webhook recusado (cabeçalho {CABECALHO_ASSINATURA}): {motivo}."),
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
    let desfecho = confirmar_pelo_psp(
        st.store.as_ref(),
        st.pix.as_ref(),
        &evento.payment_id,
        Some(agora),
    )
    .await
    .map_err(|e| match e {
        ErroConfirmacao::Store(e) => ApiError::from(e),
        ErroConfirmacao::Pix(e) => {
            tracing::warn!(erro = %e, "falha ao consultar o provedor PIX");
            ApiError::new(
                ErrorCode::ErroPix,
                "Falha ao consultar o provedor PIX; nada mudou.",
            )
        }
    })?;
    let (r, creditada, message) = match desfecho {
        Desfecho::Creditada(r) => {
            tracing::info!(recarga = %r.id, conta = %r.conta, "recarga confirmada por webhook");
            (r, true, "Pagamento confirmado; saldo creditado.".to_owned())
        }
        Desfecho::JaFinal(r) => {
            let m = format!("Recarga já estava {}; nada mudou.", r.status);
            (r, false, m)
        }
        Desfecho::NaoPaga(r) => (
            r,
            false,
            "O provedor não registra o pagamento desta cobrança; nada mudou.".into(),
        ),
        Desfecho::ValorDivergente(r) => (
            r,
            false,
            "O provedor registra um pagamento de outro valor; nada mudou.".into(),
        ),
        Desfecho::NaoEncontrada => {
            return Err(ApiError::new(
                ErrorCode::RecargaNaoEncontrada,
                "Nenhuma recarga com este paymentId.",
            ));
        }
    };
    Ok(Json(WebhookAck {
        success: true,
        recarga_id: Some(r.id),
        creditada,
        message,
    }))
}
