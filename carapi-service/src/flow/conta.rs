//! The account use case (docs/contrato.md, "Account endpoints"): balance with today's and this
//! month's use, the history, the limits and the 30-day usage. Free and never recorded.

use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{
    ConsumoItem, ErrorCode, HistoricoResponse, LimitesResponse, LimitesUpdate, SaldoResponse,
    UsoHoje, UsoItem, UsoMes, UsoResponse,
};
use chrono::Duration;

use crate::api_error::ApiError;
use crate::flow::consulta::MAX_HISTORY_CHAVE;
use crate::money::{Centavos, calendar, limites, tarifa};
use crate::state::AppState;
use crate::store::{Conta, HistoricoFilter, StoreError};

/// Usage period of `GET /v1/uso`, days (contract, "Limits": usage period 30 days).
pub(crate) const PERIODO_USO_DIAS: u32 = 30;

/// `GET /v1/saldo` of `conta`: balance, effective prices, limits and today's / this month's
/// use on the Brasília calendar.
///
/// # Errors
/// [`StoreError`] when the usage counters cannot be read.
pub(crate) async fn saldo(st: &AppState, conta: &Conta) -> Result<SaldoResponse, StoreError> {
    let now = st.clock.now();
    let uso = st
        .store
        .uso_period(conta.id, calendar::brasilia_day(now))
        .await?;
    Ok(SaldoResponse {
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
    })
}

/// Whether `busca` can match no history row: it holds a NUL, or it is longer than any stored
/// key ([`MAX_HISTORY_CHAVE`] characters) and so than any endpoint.
fn busca_matches_nothing(busca: &str) -> bool {
    busca.contains('\0') || busca.chars().nth(MAX_HISTORY_CHAVE).is_some()
}

/// `GET /v1/historico` of `conta`: the page `filtro` asks for, newest first.
///
/// # Errors
/// [`StoreError`] when the history cannot be read.
pub(crate) async fn historico(
    st: &AppState,
    conta: &Conta,
    filter: HistoricoFilter,
) -> Result<HistoricoResponse, StoreError> {
    // No stored key holds a NUL (the history keeps a lookup's key with NUL replaced), and none
    // is longer than `MAX_HISTORY_CHAVE` characters while every endpoint is shorter: such a
    // `busca` matches nothing, an empty page (never a pattern the database refuses as too
    // complex).
    let (itens, total) = if filter.busca.as_deref().is_some_and(busca_matches_nothing) {
        (Vec::new(), 0)
    } else {
        st.store.historico(conta.id, &filter).await?
    };
    Ok(HistoricoResponse {
        success: true,
        page: filter.page,
        size: filter.size,
        total,
        total_paginas: super::pagination::total_paginas(total, filter.size),
        itens: itens
            .into_iter()
            .map(|c| ConsumoItem {
                data: c.at.with_timezone(&brasilia()),
                endpoint: c.endpoint.into(),
                chave_consulta: c.chave,
                status_http: c.status,
                cobrado: c.cobrado,
                valor_cobrado: c.valor.reais(),
                saldo_antes: c.saldo_antes.map(Centavos::reais),
                saldo_depois: c.saldo_depois.map(Centavos::reais),
            })
            .collect(),
    })
}

/// `GET /v1/limites` (and the answer of `PUT`): the limits of `conta` with `message`.
pub(crate) fn limites(conta: &Conta, message: &str) -> LimitesResponse {
    LimitesResponse {
        success: true,
        message: message.to_owned(),
        limite_diario_requisicoes: conta.limite_diario,
        limite_mensal_reais: conta.limite_mensal.map(Centavos::reais),
    }
}

/// `PUT /v1/limites` of `conta`: merge-patch per field (omitted keeps, `null` or 0 removes,
/// greater than 0 sets; contract, "Account endpoints").
///
/// # Errors
/// 400 `LIMITE_INVALIDO` for an empty patch or a value out of range (nothing changes); a store
/// failure.
pub(crate) async fn atualizar_limites(
    st: &AppState,
    conta: &Conta,
    patch: LimitesUpdate,
) -> Result<LimitesResponse, ApiError> {
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
    Ok(limites(&conta, "Limites atualizados com sucesso."))
}

fn limite_invalid(msg: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::LimiteInvalido, msg)
}

/// `GET /v1/uso` of `conta`: lookups and amounts per endpoint over the last
/// [`PERIODO_USO_DIAS`] days.
///
/// # Errors
/// [`StoreError`] when the usage cannot be read.
pub(crate) async fn uso(st: &AppState, conta: &Conta) -> Result<UsoResponse, StoreError> {
    let since = st.clock.now() - Duration::days(i64::from(PERIODO_USO_DIAS));
    let itens = st.store.uso_by_endpoint(conta.id, since).await?;
    Ok(UsoResponse {
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
    })
}
