//! Free account endpoints: `GET /v1/saldo`, `GET /v1/historico`, `GET/PUT /v1/limites`,
//! `GET /v1/uso` (contract, "Account endpoints"), thin over the account use case
//! ([`crate::flow::conta`]).

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use carapi_sdk::{
    HistoricoParams, HistoricoResponse, LimitesResponse, LimitesUpdate, SaldoResponse, UsoResponse,
};

use super::extract::{Authenticated, JsonBody, Params};
use crate::api_error::ApiError;
use crate::flow::{conta, pagination};
use crate::state::AppState;
use crate::store::HistoricoFilter;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/saldo", get(saldo))
        .route("/v1/historico", get(historico))
        .route("/v1/limites", get(limites).put(atualizar_limites))
        .route("/v1/uso", get(uso))
}

/// `GET /v1/saldo`: balance, effective prices, limits and today's / this month's use
/// (Brasília time). Not recorded, free.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/saldo", tag = "conta", security(("bearer" = [])),
    responses(
        (status = 200, description = "Balance, effective prices, limits, use today and this month (Brasília)", body = SaldoResponse),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn saldo(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
) -> Result<Json<SaldoResponse>, ApiError> {
    Ok(Json(conta::saldo(&st, &conta).await?))
}

/// `GET /v1/historico`: every recorded lookup, newest first, filtered and paginated.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/historico", tag = "conta", security(("bearer" = [])),
    params(HistoricoParams),
    responses(
        (status = 200, description = "Recorded lookups, newest first", body = HistoricoResponse),
        (status = 400, description = "`PARAMETRO_INVALIDO`, only for input outside the schema: `page` or `size` below 1 or not an integer, `status` or `endpoint` outside their enumerations, a repeated parameter. Integers of any size are accepted (`size` reduced to 100, a page past the end is empty)", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn historico(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Params(p): Params<HistoricoParams>,
) -> Result<Json<HistoricoResponse>, ApiError> {
    let (page, size) = pagination::page_params(p.page, p.size)?;
    let filter = HistoricoFilter {
        busca: p.busca.filter(|b| !b.is_empty()),
        endpoint: p.endpoint,
        status: p.status,
        page,
        size,
    };
    Ok(Json(conta::historico(&st, &conta, filter).await?))
}

/// `GET /v1/limites`.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/limites", tag = "conta", security(("bearer" = [])),
    responses(
        (status = 200, description = "Current limits", body = LimitesResponse),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn limites(Authenticated(conta): Authenticated) -> Json<LimitesResponse> {
    Json(conta::limites(&conta, "Limites atuais da conta."))
}

/// `PUT /v1/limites`: merge-patch per field (omitted keeps, `null` or 0 removes, > 0 sets);
/// out of range is 400 `LIMITE_INVALIDO` and changes nothing.
#[cfg_attr(feature = "openapi", utoipa::path(put, path = "/v1/limites", tag = "conta", security(("bearer" = [])),
    request_body = LimitesUpdate,
    responses(
        (status = 200, description = "Resulting limits", body = LimitesResponse),
        (status = 400, description = "`LIMITE_INVALIDO`", body = carapi_sdk::ApiErrorBody),
        (status = 408, description = "`PARAMETRO_INVALIDO`: the body did not arrive within the server's body time-out", body = carapi_sdk::ApiErrorBody),
        (status = 413, description = "`PARAMETRO_INVALIDO`: the body is larger than the server's limit", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn atualizar_limites(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    JsonBody(patch): JsonBody<LimitesUpdate>,
) -> Result<Json<LimitesResponse>, ApiError> {
    Ok(Json(conta::atualizar_limites(&st, &conta, patch).await?))
}

/// `GET /v1/uso`: per-endpoint lookups and amounts over the last 30 days.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/uso", tag = "conta", security(("bearer" = [])),
    responses(
        (status = 200, description = "Per-endpoint aggregates over the last 30 days", body = UsoResponse),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "`taxa`: the per-second rate (per key, or per address for failed authentications)"))),
    )))]
pub(crate) async fn uso(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
) -> Result<Json<UsoResponse>, ApiError> {
    Ok(Json(conta::uso(&st, &conta).await?))
}
