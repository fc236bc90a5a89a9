//! Free account endpoints: `GET /v1/saldo`, `GET /v1/historico`, `GET/PUT /v1/limites`,
//! `GET /v1/uso` (contract, "Account endpoints").

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    ConsumoItem, ErrorCode, HistoricoParams, HistoricoResponse, LimitesResponse, LimitesUpdate,
    SaldoResponse, UsoHoje, UsoItem, UsoMes, UsoResponse,
};
use chrono::Duration;

use super::extract::{Authenticated, JsonBody, Params};
use super::pagination;
use crate::api_error::ApiError;
use crate::money::{calendar, limites, tarifa};

/// Usage period of `GET /v1/uso`, days.
pub const PERIODO_USO_DIAS: u32 = 30;
use crate::money::Centavos;
use crate::state::AppState;
use crate::store::{Conta, HistoricoFilter};

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
pub async fn saldo(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
) -> Result<Json<SaldoResponse>, ApiError> {
    let now = st.clock.now();
    let uso = st
        .store
        .uso_period(conta.id, calendar::brasilia_day(now))
        .await?;
    Ok(Json(SaldoResponse {
        success: true,
        saldo_reais: conta.saldo.reais(),
        limite_diario_requisicoes: conta.limite_diario,
        limite_mensal_reais: conta.limite_mensal.map(Centavos::reais),
        precos: tarifa::table(conta.legado),
        uso_hoje: UsoHoje {
            requisicoes: uso.hoje_requisicoes,
            gasto: uso.hoje_gasto.reais(),
            erros: uso.hoje_erros,
        },
        uso_mes: UsoMes {
            requisicoes: uso.mes_requisicoes,
            gasto: uso.mes_gasto.reais(),
        },
    }))
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
pub async fn historico(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    Params(p): Params<HistoricoParams>,
) -> Result<Json<HistoricoResponse>, ApiError> {
    let (page, size) = pagination::page_params(p.page, p.size)?;
    let filtro = HistoricoFilter {
        busca: p.busca.filter(|b| !b.is_empty()),
        endpoint: p.endpoint,
        status: p.status,
        page,
        size,
    };
    // No stored key holds a NUL (see `consulta::recorded_key`): nothing to search for.
    let (itens, total) = if filtro.busca.as_deref().is_some_and(|b| b.contains('\0')) {
        (Vec::new(), 0)
    } else {
        st.store.historico(conta.id, &filtro).await?
    };
    Ok(Json(HistoricoResponse {
        success: true,
        page,
        size,
        total,
        total_paginas: pagination::total_paginas(total, size),
        itens: itens
            .into_iter()
            .map(|c| ConsumoItem {
                data: c.em.with_timezone(&brasilia()),
                endpoint: c.endpoint.into(),
                chave_consulta: c.chave,
                status_http: c.status,
                cobrado: c.cobrado,
                valor_cobrado: c.valor.reais(),
                saldo_antes: c.saldo_antes.map(Centavos::reais),
                saldo_depois: c.saldo_depois.map(Centavos::reais),
            })
            .collect(),
    }))
}

fn limites_of(conta: &Conta, message: &str) -> LimitesResponse {
    LimitesResponse {
        success: true,
        message: message.to_owned(),
        limite_diario_requisicoes: conta.limite_diario,
        limite_mensal_reais: conta.limite_mensal.map(Centavos::reais),
    }
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
pub async fn limites(Authenticated(conta): Authenticated) -> Json<LimitesResponse> {
    Json(limites_of(&conta, "Limites atuais da conta."))
}

fn limite_invalid(msg: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::LimiteInvalido, msg)
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
pub async fn atualizar_limites(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
    JsonBody(patch): JsonBody<LimitesUpdate>,
) -> Result<Json<LimitesResponse>, ApiError> {
    if patch.limite_diario_requisicoes.is_none() && patch.limite_mensal_reais.is_none() {
        return Err(limite_invalid(
            "Informe limiteDiarioRequisicoes e/ou limiteMensalReais.",
        ));
    }
    let (diario, mensal) =
        limites::limites_of_patch(patch.limite_diario_requisicoes, patch.limite_mensal_reais)
            .map_err(limite_invalid)?;
    let conta = st
        .store
        .atualizar_limites(conta.id, diario, mensal)
        .await?
        .ok_or_else(|| ApiError::internal("conta autenticada sumiu"))?;
    Ok(Json(limites_of(&conta, "Limites atualizados com sucesso.")))
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
pub async fn uso(
    State(st): State<AppState>,
    Authenticated(conta): Authenticated,
) -> Result<Json<UsoResponse>, ApiError> {
    let desde = st.clock.now() - Duration::days(i64::from(PERIODO_USO_DIAS));
    let itens = st.store.uso_by_endpoint(conta.id, desde).await?;
    Ok(Json(UsoResponse {
        success: true,
        periodo_dias: PERIODO_USO_DIAS,
        itens: itens
            .into_iter()
            .map(|u| UsoItem {
                endpoint: u.endpoint.into(),
                quantidade: u.quantidade,
                valor_total: u.valor_total.reais(),
            })
            .collect(),
    }))
}
