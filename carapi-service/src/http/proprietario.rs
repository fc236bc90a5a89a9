//! `GET /v1/proprietario/{cpfCnpj}`: the CARs tied to a CPF/CNPJ (contract, "Lookups"), thin
//! over the lookup use case ([`crate::flow::lookup`]).
//!
//! The route takes the rest of the path, so a masked CNPJ (`12.ABC.345/01DE-35`) works whether
//! or not the client percent-encodes its `/`.

use axum::Router;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
#[cfg(feature = "openapi")]
use carapi_sdk::ProprietarioResponse;

use super::extract::{AuthenticatedConta, Lookup};
use crate::api_error::ApiError;
use crate::flow::lookup;
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new().route("/v1/proprietario/{*cpfCnpj}", get(proprietario))
}

/// `GET /v1/proprietario/{cpfCnpj}`: at most 200 CARs ordered by code, charged on 200.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/proprietario/{cpfCnpj}", tag = "consultas", security(("bearer" = [])),
    params(("cpfCnpj" = String, Path, description = "CPF (11 digits) or CNPJ (14, numeric or alphanumeric), masked or bare")),
    responses(
        (status = 200, description = "At most 200 CARs ordered by code; charged (2.60 current, 1.50 legacy)", body = ProprietarioResponse),
        (status = 400, description = "`CPF_CNPJ_INVALIDO`", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`CPF_CNPJ_NAO_ENCONTRADO`", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 402, description = "`SALDO_INSUFICIENTE`: balance too low; nothing debited", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate, daily or monthly limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "Which limit: `taxa` (requests per second), `diario` (charged lookups per day) or `mensal` (spending per month)"))),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn proprietario(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Lookup(req): Lookup,
) -> Result<Response, ApiError> {
    lookup::run(&st, conta, req).await.map(super::car::respond)
}
