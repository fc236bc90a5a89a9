//! Lookups as stored: the uncharged record, the charge, the history and the usage counters.

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, EndpointConsulta, StatusConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::StoreError;
use crate::money::cobranca::CobrancaResult;
use crate::money::{Centavos, ContaId};

/// A lookup that is recorded without a debit (any non-200 outcome decided before charging).
#[derive(Debug, Clone)]
pub struct ConsultaRecord {
    /// The account.
    pub conta: ContaId,
    /// Which endpoint.
    pub endpoint: EndpointConsulta,
    /// The looked-up key (normalised when it parsed, raw otherwise).
    pub chave: Option<String>,
    /// HTTP status answered.
    pub status: u16,
    /// When.
    pub at: DateTime<Utc>,
    /// Brasília day of `em`.
    pub day: NaiveDate,
}

/// A charged lookup about to be answered with 200. The price is not here: the store reads the
/// account's table in its transaction and `crate::money::cobranca::plan_cobranca` prices
/// it.
#[derive(Debug, Clone)]
pub struct Cobranca {
    /// Id of this charge, stored with its history row: when the outcome of the commit is
    /// unknown (the database's reply was lost), [`ConsultasStore::cobranca_outcome`] looks it
    /// up.
    pub request_id: Uuid,
    /// The account.
    pub conta: ContaId,
    /// Which endpoint.
    pub endpoint: EndpointConsulta,
    /// The looked-up key, normalised.
    pub chave: String,
    /// CAR record to mark as consolidated (its previous state gives `cache`).
    pub consolidate: Option<CodigoCar>,
    /// When.
    pub at: DateTime<Utc>,
    /// Brasília day of `em`.
    pub day: NaiveDate,
}

/// Counters for `usoHoje` / `usoMes` of `GET /v1/saldo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsoPeriod {
    /// Lookups today.
    pub hoje_requisicoes: u64,
    /// Charged lookups today.
    pub hoje_cobradas: u64,
    /// Non-200 lookups today.
    pub hoje_erros: u64,
    /// Spent today.
    pub hoje_gasto: Centavos,
    /// Lookups this month.
    pub mes_requisicoes: u64,
    /// Spent this month.
    pub mes_gasto: Centavos,
}

/// Filter and page of `GET /v1/historico`.
#[derive(Debug, Clone, Default)]
pub struct HistoricoFilter {
    /// Substring of the key or the endpoint (case-insensitive).
    pub busca: Option<String>,
    /// Exact endpoint.
    pub endpoint: Option<EndpointConsulta>,
    /// 200 or not.
    pub status: Option<StatusConsulta>,
    /// 1-based page.
    pub page: u32,
    /// Page size (1 to 100).
    pub size: u32,
}

/// One stored lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedConsulta {
    /// When.
    pub at: DateTime<Utc>,
    /// Registered endpoint form.
    pub endpoint: String,
    /// Looked-up key.
    pub(crate) chave: Option<String>,
    /// HTTP status.
    pub status: u16,
    /// Charged or not.
    pub cobrado: bool,
    /// Amount charged.
    pub valor: Centavos,
    /// Balance before.
    pub saldo_antes: Option<Centavos>,
    /// Balance after.
    pub saldo_depois: Option<Centavos>,
}

/// What [`ConsultasStore::estornar_cobranca`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estorno {
    /// The charge was not committed, or was recorded as a refusal: nothing to reverse.
    NotCobrada,
    /// The charge was already reversed: nothing more was done.
    AlreadyEstornada,
    /// The charge was reversed now: `valor` credited back.
    Estornada {
        /// The amount credited back.
        valor: Centavos,
    },
}

/// Aggregate of one endpoint over a period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsoEndpoint {
    /// Registered endpoint form.
    pub endpoint: String,
    /// Lookups (all statuses).
    pub quantidade: u64,
    /// Amount charged.
    pub valor_total: Centavos,
}

/// Lookups: the charge, the uncharged record, the history and the usage counters.
#[async_trait]
pub trait ConsultasStore {
    /// Records a lookup that is not charged (and counts it in the day's counters).
    async fn record_consulta(&self, record: ConsultaRecord) -> Result<(), StoreError>;
    /// In one transaction: reads the account, the counters its limits need and its latest
    /// history instant, plans with `crate::money::cobranca::plan_cobranca` and applies
    /// the plan (debit, history row, ledger row, counters, consolidation); a refusal is
    /// recorded with its status and debits nothing. Atomic and safe under concurrency
    /// (including other processes sharing the database).
    ///
    /// # Errors
    /// [`StoreError`]; when `StoreError::uncertain_outcome` is true the charge may have been
    /// committed: [`ConsultasStore::cobranca_outcome`] tells.
    async fn charge_consulta(&self, cobranca: Cobranca) -> Result<CobrancaResult, StoreError>;
    /// The history row of the charge `request_id` of `conta` made at `em`, once the transaction
    /// that wrote it is over (committed or not): `None` when it was not committed. Read on a
    /// connection other than the one whose reply was lost.
    async fn cobranca_outcome(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Option<RecordedConsulta>, StoreError>;
    /// Reverses, once, the charge `request_id` of `conta` made at `em` (a journaled charge
    /// whose answer was an error): in one transaction, reads its history row, plans with
    /// `crate::money::estorno::plan_estorno` and applies the plan (compensating ledger credit,
    /// balance, the row kept and marked not charged, the day's and hour's counters). Keyed by
    /// the request id through the row's `cobrado` flag: a second call finds the row already
    /// reversed and changes nothing.
    ///
    /// # Errors
    /// [`StoreError`] when the database cannot be reached or the transaction fails (nothing
    /// was changed unless the commit's reply was lost: calling again is then safe).
    async fn estornar_cobranca(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Estorno, StoreError>;
    /// The retention of uncharged error rows ([`crate::money::retencao`]): deletes, of `conta`,
    /// at most `limite` of its oldest error rows recorded before `antes`, as a prefix of its
    /// error rows, in one transaction that reads them and what was removed so far, plans with
    /// `crate::money::retencao::plan_retencao` and applies the plan (the rows deleted, what was
    /// removed per account and endpoint, the hourly usage counters). Never a charged row nor a
    /// 200. Returns how many rows were deleted (fewer than `limite`: none older is left, or the
    /// next one is younger).
    ///
    /// # Errors
    /// [`StoreError`] when the database fails (nothing was deleted unless the commit's reply
    /// was lost: calling again is safe).
    async fn remove_uncharged(
        &self,
        conta: ContaId,
        antes: DateTime<Utc>,
        limite: u32,
    ) -> Result<u64, StoreError>;
    /// Counters of `dia` and of its month.
    async fn uso_period(&self, conta: ContaId, day: NaiveDate) -> Result<UsoPeriod, StoreError>;
    /// A page of the history, newest first, and the total matching the filter.
    async fn historico(
        &self,
        conta: ContaId,
        filter: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError>;
    /// Per-endpoint aggregates since `desde`.
    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError>;
}
