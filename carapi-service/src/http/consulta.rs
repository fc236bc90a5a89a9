//! The four charged lookups (contract, "Lookups"): `GET /v1/car/{codigoCar}`, `/completo`,
//! `/recibo` and `GET /v1/proprietario/{cpfCnpj}`, one route per [`EndpointConsulta`] at the
//! pattern the route table gives it ([`super::routes::consulta_pattern`]), all served by one
//! thin handler over the lookup use case ([`crate::flow::consulta`]): the route the edge matched
//! tells which lookup ([`ConsultaRequest`]).

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use carapi_sdk::EndpointConsulta;

use super::extract::{AuthenticatedConta, ConsultaRequest};
use super::routes::consulta_pattern;
use crate::api_error::ApiError;
use crate::flow::consulta::{self, Answer, Answered};
use crate::state::AppState;

/// Routes of this group: one per charged lookup.
pub fn router() -> Router<AppState> {
    EndpointConsulta::ALL
        .into_iter()
        .fold(Router::new(), |r, e| {
            r.route(consulta_pattern(e), get(handle))
        })
}

/// `GET` of a charged lookup: runs the lookup the route asks for and answers it, charged on
/// 200 (the operations' documentation: [`doc`]).
pub(crate) async fn handle(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    ConsultaRequest(req): ConsultaRequest,
) -> Result<Response, ApiError> {
    consulta::run(&st, conta, req).await.map(respond)
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
            let disposition = format!("attachment; filename=\"{codigo}.pdf\"");
            let mut resp = pdf.into_response();
            let h = resp.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/pdf"),
            );
            if let Ok(v) = HeaderValue::from_str(&disposition) {
                h.insert(header::CONTENT_DISPOSITION, v);
            }
            resp
        }
    }
}

/// The OpenAPI description of the four operations [`handle`] serves (feature `openapi`): one
/// item per lookup, at the contract's template of its [`EndpointConsulta`].
#[cfg(feature = "openapi")]
#[expect(
    dead_code,
    reason = "documentation items: utoipa reads their attributes, the router serves `handle`"
)]
pub(crate) mod doc {
    use carapi_sdk::{
        CarDadosBasicos, CarDadosCompletos, CarResponse, EndpointConsulta, ProprietarioResponse,
    };

    /// `GET /v1/car/{codigoCar}`: basic data, charged on 200.
    #[utoipa::path(get, path = EndpointConsulta::CarBasico.route(), tag = "consultas", security(("bearer" = [])),
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
    ))]
    pub(super) fn basico() {}

    /// `GET /v1/car/{codigoCar}/completo`: complete data with owners, charged on 200.
    #[utoipa::path(get, path = EndpointConsulta::CarCompleto.route(), tag = "consultas", security(("bearer" = [])),
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
    ))]
    pub(super) fn completo() {}

    /// `GET /v1/car/{codigoCar}/recibo`: the receipt PDF, charged on 200. 503 and 502 are never
    /// charged.
    #[utoipa::path(get, path = EndpointConsulta::Recibo.route(), tag = "consultas", security(("bearer" = [])),
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
    ))]
    pub(super) fn recibo() {}

    /// `GET /v1/proprietario/{cpfCnpj}`: at most 200 CARs ordered by code, charged on 200.
    #[utoipa::path(get, path = EndpointConsulta::Proprietario.route(), tag = "consultas", security(("bearer" = [])),
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
    ))]
    pub(super) fn proprietario() {}
}
