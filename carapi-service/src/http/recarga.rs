//! Top-ups: `GET /v1/recarga/faixas`, `POST /v1/recarga`, `GET /v1/recarga/{recargaId}`,
//! `GET /v1/recargas` (contract, "Top-up endpoints"), thin over the top-up use case
//! ([`crate::flow::recarga`]). Status and list only read.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use carapi_sdk::{
    FaixasResponse, RecargaCriadaResponse, RecargaStatusResponse, RecargasParams, RecargasResponse,
};
use serde::Deserialize;

use super::extract::{Authenticated, Params, RecargaBody, Segment};
use crate::api_error::ApiError;
use crate::flow::{pagination, recarga};
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/recarga/faixas", get(faixas))
        .route("/v1/recarga", post(create))
        .route("/v1/recarga/{recargaId}", get(status))
        .route("/v1/recargas", get(list_all))
}

/// Query of `GET /v1/recarga/faixas`.
#[derive(Debug, Deserialize)]
pub(crate) struct FaixasQuery {
    /// Amount to preview, BRL.
    pub(crate) valor: Option<String>,
}

/// `GET /v1/recarga/faixas[?valor=V]`: tiers, minimum, price tables and, with `valor`, a
/// preview for it (any finite number up to the largest top-up; `null` for any other `valor`).
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recarga/faixas", tag = "recarga", security(("bearer" = [])),
    params(("valor" = Option<f64>, Query, description = "Amount in BRL to preview (any finite number up to the largest top-up; rounded to the centavo). For any other value `preview` is null")),
    responses(
        (status = 200, description = "Bonus tiers, minimum, price tables, optional preview", body = FaixasResponse),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn faixas(
    Authenticated(conta): Authenticated,
    Params(q): Params<FaixasQuery>,
) -> Json<FaixasResponse> {
    Json(recarga::faixas(&conta, q.valor.as_deref()))
}

/// `POST /v1/recarga`: creates (or reuses, within 10 minutes) a PIX charge.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/v1/recarga", tag = "recarga", security(("bearer" = [])),
    request_body = carapi_sdk::NovaRecarga,
    responses(
        (status = 200, description = "PIX charge created or reused (`reaproveitada`)", body = RecargaCriadaResponse),
        (status = 400, description = "`VALOR_INVALIDO`, `VALOR_MINIMO`, `CONFIRMACAO_PRECOS_OBRIGATORIA` or `DOCUMENTO_AUSENTE`", body = carapi_sdk::ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = carapi_sdk::ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = carapi_sdk::ApiErrorBody),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
        (status = 502, description = "`ERRO_PIX`: payment-provider failure", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn create(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    RecargaBody { body, as_written }: RecargaBody,
) -> Result<Json<RecargaCriadaResponse>, ApiError> {
    Ok(Json(recarga::create(&st, &conta, body, as_written).await?))
}

/// `GET /v1/recarga/{recargaId}`: the stored state; never changes anything.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recarga/{recargaId}", tag = "recarga", security(("bearer" = [])),
    params(("recargaId" = uuid::Uuid, Path, description = "Top-up id")),
    responses(
        (status = 200, description = "Stored state (never changed by reading)", body = RecargaStatusResponse),
        (status = 404, description = "`RECARGA_NAO_ENCONTRADA`", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn status(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Segment(raw): Segment,
) -> Result<Json<RecargaStatusResponse>, ApiError> {
    Ok(Json(recarga::status(&st, &conta, &raw).await?))
}

/// `GET /v1/recargas`: the account's top-ups, newest first.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/recargas", tag = "recarga", security(("bearer" = [])),
    params(RecargasParams),
    responses(
        (status = 200, description = "Top-ups, newest first", body = RecargasResponse),
        (status = 400, description = "`PARAMETRO_INVALIDO`, only for input outside the schema: `page` or `size` below 1 or not an integer, `status` outside its enumeration, a repeated parameter. Integers of any size are accepted (`size` reduced to 100, a page past the end is empty)", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn list_all(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Params(p): Params<RecargasParams>,
) -> Result<Json<RecargasResponse>, ApiError> {
    let page = pagination::page_params(p.page, p.size)?;
    Ok(Json(recarga::list(&st, &conta, p.status, page).await?))
}
