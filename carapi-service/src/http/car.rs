//! The CAR lookups: `GET /v1/car/{codigoCar}`, `/completo` and `/recibo` (contract, "Lookups").

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    CarDadosBasicos, CarDadosCompletos, CarResponse, CodigoCar, EndpointConsulta, ErrorCode,
    sandbox,
};
use chrono::{DateTime, FixedOffset};
use chrono_tz::America::Sao_Paulo;
use serde::Serialize;

use super::consulta::{Consulta, Segment, codigo_car_invalido};
use super::extract::AuthenticatedConta;
use crate::api_error::ApiError;
use crate::dados::{self, Imovel};
use crate::state::AppState;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/car/{codigoCar}", get(basico))
        .route("/v1/car/{codigoCar}/completo", get(completo))
        .route("/v1/car/{codigoCar}/recibo", get(recibo))
}

fn not_found(codigo: &CodigoCar) -> ApiError {
    ApiError::new(
        ErrorCode::CarNaoEncontrado,
        format!("CAR {codigo} não encontrado."),
    )
}

/// The sandbox answer for a reserved CAR code: `Ok(record)` for the 200 code, otherwise its
/// fixed error (contract, "Sandbox").
fn sandbox_car(codigo: &CodigoCar) -> Result<Imovel, ApiError> {
    match codigo.as_str() {
        sandbox::CAR_NAO_EXISTE => Err(not_found(codigo).sandbox()),
        sandbox::CAR_SEM_SALDO => Err(ApiError::new(
            ErrorCode::SaldoInsuficiente,
            "Saldo insuficiente (valor reservado de sandbox). Nada foi cobrado.",
        )
        .sandbox()),
        _ => Ok(dados::sandbox::imovel()),
    }
}

fn data_expiracao(imovel: &Imovel) -> Option<DateTime<FixedOffset>> {
    imovel
        .data_atualizacao
        .and_then(|d| d.and_local_timezone(Sao_Paulo).earliest())
        .map(|d| d.with_timezone(&brasilia()))
}

async fn lookup<T: Serialize>(
    st: &AppState,
    conta: crate::store::ContaId,
    endpoint: EndpointConsulta,
    raw: String,
    dados: fn(&Imovel) -> T,
) -> Result<Response, ApiError> {
    let mut c = Consulta::new(st, conta, endpoint, raw);
    let codigo = match CodigoCar::parse(&c.chave) {
        Ok(codigo) => codigo,
        Err(_) => return Err(c.failed(codigo_car_invalido(&c.chave)).await),
    };
    c.chave = codigo.to_string();
    if codigo.is_sandbox() {
        let imovel = sandbox_car(&codigo)?;
        return Ok(axum::Json(CarResponse {
            success: true,
            sandbox: true,
            cache: false,
            dados: dados(&imovel),
            data_consulta: c.data_consulta(),
            data_expiracao: data_expiracao(&imovel),
        })
        .into_response());
    }
    let imovel = match st.caches.imovel(st.store.as_ref(), &codigo).await {
        Ok(Some(i)) => i,
        Ok(None) => return Err(c.failed(not_found(&codigo)).await),
        Err(e) => return Err(c.failed_in_database(e).await),
    };
    let corpo = dados(&imovel);
    let cache = c.charge(Some(&codigo)).await?;
    Ok(axum::Json(CarResponse {
        success: true,
        sandbox: false,
        cache,
        dados: corpo,
        data_consulta: c.data_consulta(),
        data_expiracao: data_expiracao(&imovel),
    })
    .into_response())
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
pub async fn basico(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Segment(raw): Segment,
) -> Result<Response, ApiError> {
    lookup::<CarDadosBasicos>(
        &st,
        conta,
        EndpointConsulta::CarBasico,
        raw,
        Imovel::dados_basicos,
    )
    .await
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
pub async fn completo(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Segment(raw): Segment,
) -> Result<Response, ApiError> {
    lookup::<CarDadosCompletos>(
        &st,
        conta,
        EndpointConsulta::CarCompleto,
        raw,
        Imovel::dados_completos,
    )
    .await
}

fn pdf(codigo: &CodigoCar, bytes: Vec<u8>) -> Response {
    let disposicao = format!("attachment; filename=\"{codigo}.pdf\"");
    let mut resp = bytes.into_response();
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

fn recibo_indisponivel() -> ApiError {
    ApiError::new(
        ErrorCode::ReciboIndisponivel,
        "Falha ao gerar o PDF do recibo. Nada foi cobrado; tente novamente.",
    )
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
pub async fn recibo(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Segment(raw): Segment,
) -> Result<Response, ApiError> {
    let mut c = Consulta::new(&st, conta, EndpointConsulta::Recibo, raw);
    let codigo = match CodigoCar::parse(&c.chave) {
        Ok(codigo) => codigo,
        Err(_) => return Err(c.failed(codigo_car_invalido(&c.chave)).await),
    };
    c.chave = codigo.to_string();
    if codigo.is_sandbox() {
        let imovel = sandbox_car(&codigo)?;
        let bytes = crate::recibo::render(&imovel, c.data_consulta()).map_err(|e| {
            tracing::error!(erro = %e, "recibo de sandbox");
            recibo_indisponivel().sandbox()
        })?;
        return Ok(pdf(&codigo, bytes));
    }
    if !st.recibo_service.is_available() {
        return Err(c
            .failed(ApiError::new(
                ErrorCode::ServicoIndisponivel,
                "Serviço de recibos temporariamente indisponível. Nada foi cobrado.",
            ))
            .await);
    }
    let imovel = match st.caches.imovel(st.store.as_ref(), &codigo).await {
        Ok(Some(i)) => i,
        Ok(None) => return Err(c.failed(not_found(&codigo)).await),
        Err(e) => return Err(c.failed_in_database(e).await),
    };
    if !imovel.tem_recibo {
        return Err(c
            .failed(ApiError::new(
                ErrorCode::ReciboNaoEncontrado,
                format!("Recibo do CAR {codigo} não disponível."),
            ))
            .await);
    }
    let bytes = match st.recibo_service.generate(&imovel, c.data_consulta()) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(erro = %e, codigo = %codigo, "falha ao gerar recibo");
            return Err(c.failed(recibo_indisponivel()).await);
        }
    };
    c.charge(Some(&codigo)).await?;
    Ok(pdf(&codigo, bytes))
}
