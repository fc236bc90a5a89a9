//! `GET /v1/proprietario/{cpfCnpj}`: the CARs tied to a CPF/CNPJ (contract, "Lookups").
//!
//! The route takes the rest of the path, so a masked CNPJ (`12.ABC.345/01DE-35`) works whether
//! or not the client percent-encodes its `/`.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use carapi_sdk::domain::{br, uf};
use carapi_sdk::{
    CpfCnpj, EndpointConsulta, ErrorCode, ProprietarioItem, ProprietarioResponse, sandbox,
};

use super::consulta::{Consulta, Segment};
use super::extract::AuthenticatedConta;
use crate::api_error::ApiError;
/// Ceiling of items of an owner lookup.
pub const LIMITE_PROPRIETARIO: u32 = 200;
use crate::state::AppState;
use crate::store::OwnerImovel;

/// Routes of this group.
pub fn router() -> Router<AppState> {
    Router::new().route("/v1/proprietario/{*cpfCnpj}", get(proprietario))
}

fn not_found(doc: &str) -> ApiError {
    ApiError::new(
        ErrorCode::CpfCnpjNaoEncontrado,
        format!("Nenhum CAR vinculado ao documento {doc}."),
    )
}

fn item(imovel: &OwnerImovel, documento: &CpfCnpj) -> ProprietarioItem {
    ProprietarioItem {
        registro_car: imovel.codigo_car.to_string(),
        codigo_protocolo: imovel.codigo_protocolo.clone(),
        nome_imovel: imovel.nome_imovel.clone(),
        matricula_numero: imovel.matricula_numero.clone(),
        municipio: Some(imovel.municipio.clone()),
        uf: Some(uf::nome(&imovel.uf).unwrap_or(&imovel.uf).to_owned()),
        area_total_ha: Some(br::format_decimal(imovel.area_total_ha, 4)),
        proprietario_consultado: Some(documento.formatado()),
    }
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
pub async fn proprietario(
    State(st): State<AppState>,
    AuthenticatedConta(conta): AuthenticatedConta,
    Segment(raw): Segment,
) -> Result<Json<ProprietarioResponse>, ApiError> {
    let raw = raw.trim_start_matches('/').to_owned();
    let mut c = Consulta::new(&st, conta, EndpointConsulta::Proprietario, raw);
    let documento = match CpfCnpj::parse(&c.chave) {
        Ok(d) => d,
        Err(_) => {
            let e = ApiError::new(
                ErrorCode::CpfCnpjInvalido,
                format!(
                    "CPF/CNPJ inválido: {:?}. CPF com 11 dígitos ou CNPJ com 14 caracteres, com dígitos verificadores válidos.",
                    c.chave
                ),
            );
            return Err(c.failed(e).await);
        }
    };
    c.chave = documento.to_string();
    if documento.is_sandbox() {
        return match (
            documento.as_str(),
            crate::dados::sandbox::proprietario(documento.as_str()),
        ) {
            (sandbox::CPF_NAO_ENCONTRADO, _) | (_, None) => {
                Err(not_found(documento.as_str()).sandbox())
            }
            (_, Some(mut r)) => {
                r.sandbox = true;
                Ok(Json(r))
            }
        };
    }
    let (imoveis, truncado) = match st
        .store
        .itens_of_documento(&documento, LIMITE_PROPRIETARIO)
        .await
    {
        Ok(r) => r,
        Err(e) => return Err(c.failed_in_database(e).await),
    };
    if imoveis.is_empty() {
        return Err(c.failed(not_found(&documento.formatado())).await);
    }
    let itens: Vec<ProprietarioItem> = imoveis.iter().map(|i| item(i, &documento)).collect();
    c.charge(None).await?;
    Ok(Json(ProprietarioResponse {
        success: true,
        sandbox: false,
        total: itens.len() as u32,
        limite: LIMITE_PROPRIETARIO,
        truncado,
        itens,
    }))
}
