//! What the four charged lookups share: recording every non-sandbox outcome, and the debit
//! (balance, limits, history row and counters in one store transaction).

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use carapi_sdk::domain::brl;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{CodigoCar, EndpointConsulta, ErrorCode};
use chrono::{DateTime, FixedOffset, SubsecRound, Utc};
use uuid::Uuid;

use crate::api_error::{ApiError, Limite};
use crate::money::{Centavos, calendar};
use crate::state::AppState;
use crate::store::{
    Cobranca, CobrancaResult, ConsultaRecord, ContaId, StoreError, charge_with_outcome,
};

/// The single path parameter of a route, decoded; one that does not decode to UTF-8 gets the
/// route's own contract error ([`super::edge::segment_error`]).
#[derive(Debug)]
pub struct Segment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(s)| Segment(s))
            .map_err(|e| {
                super::edge::segment_error(
                    parts.uri.path(),
                    format!("Parâmetro de caminho inválido: {e}"),
                )
            })
    }
}

/// At most this many characters of a looked-up key are stored in the history: a valid CAR
/// code has 43 and a masked CNPJ 18, so only garbage is cut, and a free 400 cannot grow the
/// database by more than a bounded row.
pub const MAX_HISTORY_KEY: usize = 64;

/// The first [`MAX_HISTORY_KEY`] characters of `chave`, each NUL replaced by U+FFFD:
/// the form stored in the history (PostgreSQL text cannot hold NUL, and both stores must
/// record the same thing).
pub fn recorded_key(chave: &str) -> String {
    let curta: String = chave.chars().take(MAX_HISTORY_KEY).collect();
    crate::store::historico::without_nul(&curta).into_owned()
}

/// One charged lookup in progress.
#[derive(Debug)]
pub struct Consulta<'a> {
    st: &'a AppState,
    conta: ContaId,
    endpoint: EndpointConsulta,
    /// The key recorded in the history: the raw input until it parses, then its normal form.
    pub chave: String,
    now: DateTime<Utc>,
}

impl<'a> Consulta<'a> {
    /// Starts a lookup of `chave` (raw) on `endpoint`.
    pub fn new(
        st: &'a AppState,
        conta: ContaId,
        endpoint: EndpointConsulta,
        chave: impl Into<String>,
    ) -> Self {
        Consulta {
            st,
            conta,
            endpoint,
            chave: chave.into(),
            now: st.clock.now().trunc_subsecs(3),
        }
    }

    /// Time of the lookup in Brasília time (`dataConsulta`).
    pub fn data_consulta(&self) -> DateTime<FixedOffset> {
        self.now.with_timezone(&brasilia())
    }

    /// Records a failed lookup (never for sandbox values) and hands the error back.
    pub async fn failed(&self, erro: ApiError) -> ApiError {
        if !erro.is_sandbox() {
            let registro = ConsultaRecord {
                conta: self.conta,
                endpoint: self.endpoint,
                chave: Some(recorded_key(&self.chave)),
                status: erro.status().as_u16(),
                em: self.now,
                dia: calendar::brasilia_day(self.now),
            };
            if let Err(e) = self.st.store.record_consulta(registro).await {
                tracing::error!(erro = %e, "falha ao registrar consulta no histórico");
            }
        }
        erro
    }

    /// [`Consulta::failed`] for a store error; a database that is away
    /// ([`crate::api_error::database_down`]) is not asked to record anything.
    pub async fn failed_in_database(&self, e: StoreError) -> ApiError {
        if crate::api_error::database_down(&e) {
            return e.into();
        }
        self.failed(e.into()).await
    }

    /// Debits the lookup; `consolidate` is the CAR record whose earlier consolidation gives
    /// `cache`. Returns `cache`. A refusal (402, 429) has been recorded by the store.
    pub async fn charge(&self, consolidate: Option<&CodigoCar>) -> Result<bool, ApiError> {
        let cobranca = Cobranca {
            request_id: Uuid::new_v4(),
            conta: self.conta,
            endpoint: self.endpoint,
            chave: recorded_key(&self.chave),
            consolidate: consolidate.cloned(),
            em: self.now,
            dia: calendar::brasilia_day(self.now),
        };
        match charge_with_outcome(self.st.store.as_ref(), cobranca).await? {
            CobrancaResult::Cobrada { cache, .. } => Ok(cache),
            CobrancaResult::SaldoInsuficiente { saldo, preco } => {
                Err(saldo_insuficiente(saldo, preco))
            }
            CobrancaResult::LimiteDiario {
                limite,
                retry_after,
            } => Err(ApiError::limit_exceeded(
                Limite::Diario,
                retry_after,
                format!(
                    "Limite diário de {limite} consultas cobradas atingido (horário de Brasília)."
                ),
            )),
            CobrancaResult::LimiteMensal {
                limite,
                gasto,
                retry_after,
            } => Err(ApiError::limit_exceeded(
                Limite::Mensal,
                retry_after,
                format!(
                    "Limite mensal de gastos de {limite} seria ultrapassado (gasto no mês: {gasto})."
                ),
            )),
        }
    }
}

/// 402 `SALDO_INSUFICIENTE`.
pub fn saldo_insuficiente(saldo: Centavos, preco: Centavos) -> ApiError {
    ApiError::new(
        ErrorCode::SaldoInsuficiente,
        format!(
            "Saldo insuficiente: a consulta custa {} e o saldo é {}. Nada foi cobrado.",
            brl::format(preco.reais()),
            brl::format(saldo.reais())
        ),
    )
}

/// 400 `CODIGO_CAR_INVALIDO` for `raw`.
pub fn codigo_car_invalido(raw: &str) -> ApiError {
    ApiError::new(
        ErrorCode::CodigoCarInvalido,
        format!(
            "Código CAR inválido: {raw:?}. Formato: UF-CodigoMunicipio-Hash (32 hexadecimais)."
        ),
    )
}
