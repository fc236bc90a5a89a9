//! Recording a lookup's outcome and charging it: every non-sandbox outcome becomes a history
//! row; the charge debits the balance and writes the row, the ledger entry and the day's
//! counters in one store transaction (docs/contrato.md, "Limits", "Prices").

use carapi_sdk::domain::brl;
use carapi_sdk::models::timestamp::brasilia;
use carapi_sdk::{CodigoCar, EndpointConsulta, ErrorCode};
use chrono::{DateTime, FixedOffset, SubsecRound, Utc};
use uuid::Uuid;

use super::outcome::charge_with_outcome;
use crate::api_error::{ApiError, Limite};
use crate::money::{Centavos, calendar};
use crate::state::AppState;
use crate::store::{Cobranca, CobrancaResult, ConsultaRecord, ContaId};

/// At most this many characters of a looked-up key are stored in the history: a valid CAR
/// code has 43 and a masked CNPJ 18, so only garbage is cut, and a free 400 cannot grow the
/// database by more than a bounded row.
pub(crate) const MAX_HISTORY_CHAVE: usize = 64;

/// The first [`MAX_HISTORY_CHAVE`] characters of `chave`, each NUL replaced by U+FFFD:
/// the form stored in the history (PostgreSQL text cannot hold NUL, and both stores must
/// record the same thing).
pub(crate) fn recorded_chave(chave: &str) -> String {
    let short: String = chave.chars().take(MAX_HISTORY_CHAVE).collect();
    crate::store::historico::without_nul(&short).into_owned()
}

/// One charged lookup in progress.
#[derive(Debug)]
pub(super) struct Consulta<'a> {
    st: &'a AppState,
    conta: ContaId,
    endpoint: EndpointConsulta,
    /// The key recorded in the history (the normal form once it parses, else as sent).
    chave: String,
    now: DateTime<Utc>,
}

impl<'a> Consulta<'a> {
    /// Starts a lookup of `chave` (raw) on `endpoint`.
    pub(super) fn new(
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
    pub(super) fn data_consulta(&self) -> DateTime<FixedOffset> {
        self.now.with_timezone(&brasilia())
    }

    /// Records a failed lookup (never for sandbox values) and hands the error back.
    pub(super) async fn failed(&self, error: ApiError) -> ApiError {
        if !error.is_sandbox() {
            let record = ConsultaRecord {
                conta: self.conta,
                endpoint: self.endpoint,
                chave: Some(recorded_chave(&self.chave)),
                status: error.status().as_u16(),
                at: self.now,
                day: calendar::brasilia_day(self.now),
            };
            if let Err(e) = self.st.store.record_consulta(record).await {
                tracing::error!(erro = %e, "falha ao registrar consulta no histórico");
            }
        }
        error
    }

    /// [`Consulta::failed`] for a failure before the charge; a database that is away
    /// ([`crate::api_error::database_down`]) is not asked to record anything.
    pub(super) async fn failed_or_away(&self, f: Failure) -> ApiError {
        match f {
            Failure::Api(e) => self.failed(e).await,
            Failure::Store(e) if crate::api_error::database_down(&e) => e.into(),
            Failure::Store(e) => self.failed(e.into()).await,
        }
    }

    /// Debits the lookup; `consolidate` is the CAR record whose earlier consolidation gives
    /// `cache`. Returns `cache` and the amount debited. A refusal (402, 429, with the plan's `Retry-After`) has been
    /// recorded by the store.
    pub(super) async fn charge(
        &self,
        consolidate: Option<CodigoCar>,
    ) -> Result<(bool, Centavos), ApiError> {
        let cobranca = Cobranca {
            request_id: Uuid::new_v4(),
            conta: self.conta,
            endpoint: self.endpoint,
            chave: recorded_chave(&self.chave),
            consolidate,
            at: self.now,
            day: calendar::brasilia_day(self.now),
        };
        let journal = self.st.journal.as_deref();
        match charge_with_outcome(self.st.store.as_ref(), cobranca, journal).await? {
            CobrancaResult::Cobrada { cache, valor, .. } => {
                crate::metrics::debited(self.endpoint.as_str(), valor.get());
                Ok((cache, valor))
            }
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
fn saldo_insuficiente(saldo: Centavos, preco: Centavos) -> ApiError {
    ApiError::new(
        ErrorCode::SaldoInsuficiente,
        format!(
            "Saldo insuficiente: a consulta custa {} e o saldo é {}. Nada foi cobrado.",
            brl::format(preco.reais()),
            brl::format(saldo.reais())
        ),
    )
}

/// A failure before the charge: the contract error to record and answer.
pub(super) enum Failure {
    /// A contract error.
    Api(ApiError),
    /// A store failure (recorded unless the database is away).
    Store(crate::store::StoreError),
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure::Api(e)
    }
}

impl From<crate::store::StoreError> for Failure {
    fn from(e: crate::store::StoreError) -> Self {
        Failure::Store(e)
    }
}
