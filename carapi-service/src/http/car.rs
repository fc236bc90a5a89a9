//! The CAR lookups: `GET /v1/car/{codigoCar}`, `/completo` and `/recibo` (contract, "Lookups"),
//! thin over the lookup use case ([`crate::flow::lookup`]).

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
#[cfg(feature = "openapi")]
use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse};

use super::extract::{AuthenticatedConta, Lookup};
use crate::api_error::ApiError;
use crate::flow::lookup::{self, Answer, Answered};
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/car/{codigoCar}", get(basico))
        .route("/v1/car/{codigoCar}/completo", get(completo))
        .route("/v1/car/{codigoCar}/recibo", get(recibo))
}

/// The HTTP answer of a lookup: JSON, or the receipt PDF with its headers (contract,
/// "Lookups" 3); what it debited in the extensions (the access log's).
pub(super) fn respond(a: Answered) -> Response {
    let mut resp = answer_of(a.answer);
    if let Some(c) = a.cobrado {
        resp.extensions_mut().insert(c);
    }
    resp
}

fn answer_of(answer: Answer) -> Response {
    match answer {
        Answer::Basico(r) => axum::Json(r).into_response(),
        Answer::Completo(r) => axum::Json(r).into_response(),
        Answer::Proprietario(r) => axum::Json(r).into_response(),
        Answer::Recibo { codigo, pdf } => {
            let disposicao = format!("attachment; filename=\"{codigo}.pdf\"");
            let mut resp = pdf.into_response();
            let h = resp.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/pdf"),
            );
            if let Ok(v) = HeaderValue::from_str(&disposicao) {
                h.insert(header::CONTENT_DISPOSITION, v);
            }
            resp
        }
    }
}

/// `GET /v1/car/{codigoCar}`: basic data, charged on 200.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/car/{codigoCar}", tag = "consultas", security(("bearer" = [])),
    params(("codigoCar" = String, Path, description = "CAR code `UF-IIIIIII-<32 hex>`; dots, spaces and case are normalised")),
    responses(
        (status = 200, description = "Basic data; charged (1.00 current, 0.50 legacy)", body = CarResponse<CarDadosBasicos>),
        (status = 400, description = "`CODIGO_CAR_INVALIDO`", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`CAR_NAO_ENCONTRADO`", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 402, description = "`SALDO_INSUFICIENTE`: balance too low; nothing debited", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate, daily or monthly limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "Which limit: `taxa` (requests per second), `diario` (charged lookups per day) or `mensal` (spending per month)"))),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn basico(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Lookup(req): Lookup,
) -> Result<Response, ApiError> {
    lookup::run(&st, conta, req).await.map(respond)
}

/// `GET /v1/car/{codigoCar}/completo`: complete data with owners, charged on 200.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/car/{codigoCar}/completo", tag = "consultas", security(("bearer" = [])),
    params(("codigoCar" = String, Path, description = "CAR code `UF-IIIIIII-<32 hex>`; dots, spaces and case are normalised")),
    responses(
        (status = 200, description = "Complete data with owners; charged (2.30 current, 1.50 legacy)", body = CarResponse<CarDadosCompletos>),
        (status = 400, description = "`CODIGO_CAR_INVALIDO`", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`CAR_NAO_ENCONTRADO`", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 402, description = "`SALDO_INSUFICIENTE`: balance too low; nothing debited", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate, daily or monthly limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "Which limit: `taxa` (requests per second), `diario` (charged lookups per day) or `mensal` (spending per month)"))),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn completo(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Lookup(req): Lookup,
) -> Result<Response, ApiError> {
    lookup::run(&st, conta, req).await.map(respond)
}

/// `GET /v1/car/{codigoCar}/recibo`: the receipt PDF, charged on 200. 503 and 502 are never
/// charged.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/v1/car/{codigoCar}/recibo", tag = "consultas", security(("bearer" = [])),
    params(("codigoCar" = String, Path, description = "CAR code `UF-IIIIIII-<32 hex>`; dots, spaces and case are normalised")),
    responses(
        (status = 200, description = "Receipt PDF; charged (11.00 current, 10.00 legacy)", content_type = "application/pdf", body = Vec<u8>,
            headers(("Content-Disposition" = String, description = "attachment; filename=\"<codigoCar>.pdf\""))),
        (status = 400, description = "`CODIGO_CAR_INVALIDO`", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "`CAR_NAO_ENCONTRADO` or `RECIBO_NAO_ENCONTRADO`", body = carapi_sdk::ApiErrorBody),
        (status = 502, description = "`RECIBO_INDISPONIVEL`: failure after validation; not charged", body = carapi_sdk::ApiErrorBody),
        (status = 503, description = "`SERVICO_INDISPONIVEL`: receipt service down; not charged", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: key missing or invalid", body = carapi_sdk::ApiErrorBody),
        (status = 402, description = "`SALDO_INSUFICIENTE`: balance too low; nothing debited", body = carapi_sdk::ApiErrorBody),
        (status = 429, description = "`LIMITE_EXCEDIDO`: rate, daily or monthly limit", body = carapi_sdk::ApiErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"),
                ("Carapi-Limite" = String, description = "Which limit: `taxa` (requests per second), `diario` (charged lookups per day) or `mensal` (spending per month)"))),
        (status = 500, description = "`ERRO_INTERNO`", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn recibo(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Lookup(req): Lookup,
) -> Result<Response, ApiError> {
    lookup::run(&st, conta, req).await.map(respond)
}
