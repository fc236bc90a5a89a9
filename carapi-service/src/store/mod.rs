//! Storage behind one trait per area: accounts and the ledger ([`ContasStore`]), CAR records
//! ([`ImoveisStore`]), lookups with their history and limit counters ([`ConsultasStore`]),
//! top-ups ([`RecargasStore`]), the simulated PSP's book ([`PspStore`]) and what processes on
//! one database share ([`CoordinationStore`]); [`Store`] is all of them. All SQL lives in the
//! implementations ([`SqliteStore`], [`PgStore`], one file per area); handlers only call these
//! methods. The money rules are not here: both stores read state, call the plan functions of
//! [`crate::money`] and apply the plans.
//!
//! Money is [`Centavos`]; instants are UTC; the caller passes the Brasília calendar day (the
//! store never decides time zones).

pub(crate) mod historico;
pub mod journal;
#[cfg(feature = "postgres")]
pub mod postgres;
mod schema;
mod sqlite;

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj, EndpointConsulta, RecargaStatus, StatusConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::dados::Imovel;
use crate::money::Centavos;
pub use crate::money::ContaId;
pub use crate::money::cobranca::CobrancaResult;
pub use crate::money::limites::Patch;
pub use crate::money::recarga::{CREATION_DEADLINE_S, Confirmation, Recarga};
use crate::rate_limit::KeyRateLimit;
use crate::rate_limit::RateLimiter;

pub use crate::metrics::PoolUse;
pub use historico::SEARCH_WINDOW;
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
pub use schema::OpenMode;
pub use sqlite::SqliteStore;

/// True for the URL schemes of the PostgreSQL store (`postgres://`, `postgresql://`), whether or
/// not this build includes it (cargo feature `postgres`).
pub fn is_postgres_url(url: &str) -> bool {
    let u = url.trim_start();
    ["postgres://", "postgresql://"]
        .iter()
        .any(|p| u.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// A storage failure, said as what happened, not which driver said it. Handlers turn it into
/// 500 `ERRO_INTERNO` (503 for [`StoreError::Unavailable`]) and log the detail.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be reached in time (no connection within the store's wait):
    /// nothing was read or written, and the operation can be retried.
    #[error("database unavailable: {0}")]
    Unavailable(#[source] DriverError),
    /// The database failed or refused the operation.
    #[error("database: {0}")]
    Database(#[source] DriverError),
    /// Migrations failed.
    #[error("migrations: {0}")]
    Migration(#[source] DriverError),
    /// The database is missing where it may not be created, or its schema is not this
    /// binary's (newer, or older where it may not be migrated): the Portuguese message says
    /// which and what to do.
    #[error("{0}")]
    Schema(String),
    /// The SQLite lookup writer could not commit the group this request was part of (nothing
    /// of the group was written).
    #[error("database: group commit failed: {0}")]
    GroupCommit(String),
    /// The SQLite lookup writer thread is gone (store closed or thread not started).
    #[error("database writer stopped")]
    WriterStopped,
    /// A stored value could not be read back (corrupt or foreign data).
    #[error("stored value unreadable: {0}")]
    Corrupt(String),
    /// The reply of a commit was lost (the database connection dropped after the `COMMIT` was
    /// sent, or the SQLite writer's reply never came) and whether it committed is not known
    /// yet: [`ConsultasStore::cobranca_outcome`] tells.
    #[error("database: commit outcome unknown: {0}")]
    ReplyLost(String),
}

/// The driver's own error behind a [`StoreError`] (for the log and `source()`), without naming
/// the driver in the port.
pub(crate) type DriverError = Box<dyn std::error::Error + Send + Sync>;

impl From<sqlx::Error> for StoreError {
    /// A pool that gave no connection in time is [`StoreError::Unavailable`]; anything else
    /// [`StoreError::Database`].
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::PoolTimedOut => {
                crate::metrics::pool_timed_out();
                StoreError::Unavailable(Box::new(e))
            }
            e => StoreError::Database(Box::new(e)),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Migration(Box::new(e))
    }
}

impl From<crate::money::Overflow> for StoreError {
    /// A stored amount that cannot be summed is corrupt data.
    fn from(e: crate::money::Overflow) -> Self {
        StoreError::Corrupt(e.to_string())
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(Box::new(e))
    }
}

impl StoreError {
    /// True when the operation may have been committed although it failed
    /// ([`StoreError::ReplyLost`]).
    pub(crate) fn uncertain_outcome(&self) -> bool {
        matches!(self, StoreError::ReplyLost(_))
    }

    /// The error of a commit whose reply was lost (`commit`) and whose outcome could not be
    /// learned either (`busca`).
    pub(crate) fn unknown_outcome(commit: &impl fmt::Display, busca: &StoreError) -> StoreError {
        StoreError::ReplyLost(format!("{commit}; lookup failed: {busca}"))
    }
}

/// An API account as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct Conta {
    /// Account id.
    pub(crate) id: ContaId,
    /// Hex SHA-256 of the API key (never the key).
    pub chave_hash: String,
    /// Balance, never negative.
    pub saldo: Centavos,
    /// On the legacy price table (until its first confirmed top-up).
    pub legado: bool,
    /// CPF/CNPJ of the linked user (the PIX payer); `None` gives `DOCUMENTO_AUSENTE`.
    pub documento: Option<CpfCnpj>,
    /// E-mail of the linked user.
    pub email: Option<String>,
    /// Daily limit of charged lookups; `None` = unlimited.
    pub limite_diario: Option<u32>,
    /// Monthly spending ceiling; `None` = unlimited.
    pub limite_mensal: Option<Centavos>,
}

impl fmt::Debug for Conta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conta")
            .field("id", &self.id)
            .field("saldo", &self.saldo)
            .field("legado", &self.legado)
            .field("limite_diario", &self.limite_diario)
            .field("limite_mensal", &self.limite_mensal)
            .finish_non_exhaustive()
    }
}

/// A new account to store.
#[derive(Debug, Clone)]
pub struct NovaContaRecord {
    /// Hex SHA-256 of the API key.
    pub chave_hash: String,
    /// Initial balance (recorded in the ledger as an `saldo_inicial` credit).
    pub saldo: Centavos,
    /// Start on the legacy price table.
    pub legado: bool,
    /// Linked user's document.
    pub documento: Option<CpfCnpj>,
    /// Linked user's e-mail.
    pub email: Option<String>,
    /// Creation instant.
    pub em: DateTime<Utc>,
}

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
    pub em: DateTime<Utc>,
    /// Brasília day of `em`.
    pub dia: NaiveDate,
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
    pub em: DateTime<Utc>,
    /// Brasília day of `em`.
    pub dia: NaiveDate,
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
    pub em: DateTime<Utc>,
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

/// What [`ConsultasStore::reverse_cobranca`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estorno {
    /// The charge was not committed, or was recorded as a refusal: nothing to reverse.
    NaoCobrada,
    /// The charge was already reversed: nothing more was done.
    JaEstornada,
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

/// Ledger check of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// The account.
    pub conta_id: ContaId,
    /// Stored balance.
    pub saldo: Centavos,
    /// Sum of credits in the ledger.
    pub creditos: Centavos,
    /// Sum of debits in the ledger.
    pub debitos: Centavos,
    /// Sum of `valorCobrado` in the lookup history.
    pub cobrado_historico: Centavos,
    /// Sum of amount plus bonus of confirmed top-ups.
    pub creditado_recargas: Centavos,
    /// Sum of the initial-balance credits.
    pub saldo_inicial: Centavos,
    /// Sum of the reversals' compensating credits (`origem = 'estorno'`): each reverses a debit
    /// of a charge answered with an error ([`ConsultasStore::reverse_cobranca`]).
    pub estornos: Centavos,
}

impl Ledger {
    /// True when `saldo == creditos - debitos`, the debits equal what the history says was
    /// charged plus the reversed debits, and the credits equal the initial balance plus
    /// confirmed top-ups plus the reversals.
    pub fn is_consistent(&self) -> bool {
        let creditos = self
            .saldo_inicial
            .checked_add(self.creditado_recargas)
            .and_then(|c| c.checked_add(self.estornos));
        self.creditos.checked_sub(self.debitos) == Ok(self.saldo)
            && self.cobrado_historico.checked_add(self.estornos) == Ok(self.debitos)
            && creditos == Ok(self.creditos)
            && self.saldo >= Centavos::ZERO
    }
}

/// A charge in the simulated PSP's book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PspCharge {
    /// Amount of the charge.
    pub valor: Centavos,
    /// When it was paid; `None` while pending.
    pub paga_em: Option<DateTime<Utc>>,
}

/// Server settings kept in the database (`configuracao` table).
#[async_trait]
pub trait SettingsStore {
    /// The value of `chave`, storing `valor` first when there is none; atomic: concurrent
    /// first calls, in any process, all get the value that was stored.
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError>;
    /// The value of `chave`, `None` when there is none (nothing is written).
    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError>;
}

/// Accounts, their limits and the ledger check.
#[async_trait]
pub trait ContasStore {
    /// Creates an account (and its initial-balance ledger credit).
    async fn create_conta(&self, nova: NovaContaRecord) -> Result<ContaId, StoreError>;
    /// The account whose key hashes to `chave_hash`.
    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError>;
    /// The account `id`.
    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError>;
    /// Every account id, ascending.
    async fn contas(&self) -> Result<Vec<ContaId>, StoreError>;
    /// Applies a merge-patch to the limits and returns the account after it.
    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError>;
    /// The ledger sums of an account.
    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError>;
}

/// CAR records and their owners.
#[async_trait]
pub trait ImoveisStore {
    /// Number of stored records.
    async fn count_imoveis(&self) -> Result<u64, StoreError>;
    /// Inserts or replaces records by CAR code (idempotent); returns how many were written.
    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError>;
    /// The record of `codigo`.
    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError>;
    /// The first `limite` records tied to `documento`, ordered by CAR code, and whether there
    /// are more.
    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError>;
    /// What `GET /v1/proprietario/{cpfCnpj}` shows of the first `limite` records tied to
    /// `documento`, ordered by CAR code, and whether there are more: one indexed query reading
    /// only the item's columns (no owners, no dates), whatever the owner's size.
    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError>;
}

/// The columns of a record that an owner lookup's item shows (contract, `ProprietarioItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerImovel {
    /// CAR code.
    pub codigo_car: CodigoCar,
    /// Protocol number.
    pub(crate) codigo_protocolo: Option<String>,
    /// Property name.
    pub(crate) nome_imovel: Option<String>,
    /// Registry (matrícula) number.
    pub(crate) matricula_numero: Option<String>,
    /// Municipality name.
    pub(crate) municipio: String,
    /// State code (`MT`).
    pub(crate) uf: crate::dados::Uf,
    /// Total area, hectares.
    pub(crate) area_total_ha: rust_decimal::Decimal,
}

impl From<&Imovel> for OwnerImovel {
    fn from(i: &Imovel) -> Self {
        OwnerImovel {
            codigo_car: i.codigo_car.clone(),
            codigo_protocolo: i.codigo_protocolo.clone(),
            nome_imovel: i.nome_imovel.clone(),
            matricula_numero: i.matricula_numero.clone(),
            municipio: i.municipio.clone(),
            uf: i.uf,
            area_total_ha: i.area_total_ha,
        }
    }
}

/// Lookups: the charge, the uncharged record, the history and the usage counters.
#[async_trait]
pub trait ConsultasStore {
    /// Records a lookup that is not charged (and counts it in the day's counters).
    async fn record_consulta(&self, registro: ConsultaRecord) -> Result<(), StoreError>;
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
        em: DateTime<Utc>,
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
    async fn reverse_cobranca(
        &self,
        conta: ContaId,
        request_id: Uuid,
        em: DateTime<Utc>,
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
    async fn uso_period(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriod, StoreError>;
    /// A page of the history, newest first, and the total matching the filter.
    async fn historico(
        &self,
        conta: ContaId,
        filtro: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError>;
    /// Per-endpoint aggregates since `desde`.
    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError>;
}

/// PIX top-ups of the accounts.
#[async_trait]
pub trait RecargasStore {
    /// A pending top-up of `conta` for `valor` created at or after `desde` (one still being
    /// created is not returned).
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError>;
    /// Stores `nova` unless a reusable one (same account and amount, pending, created at or
    /// after `desde`; one still being created counts unless older than [`CREATION_DEADLINE_S`]
    /// before `nova.criada_em`) exists, in one transaction; returns the top-up and whether it
    /// was reused. `nova` may be a row being created (empty `qr_code`).
    async fn insert_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError>;
    /// Fills in the BR Code of the top-up `id` being created.
    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError>;
    /// Deletes the top-up `id` if it is still being created (its provider call failed).
    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError>;
    /// The top-up `id` of `conta` (None when missing, another account's or being created).
    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up `id`, whatever the account, also while being created (operator tools).
    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up whose payment id is `payment_id` (webhook).
    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError>;
    /// A page of the account's top-ups, newest first, and the total.
    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError>;
    /// Up to `limite` pending top-ups of every account, oldest first.
    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError>;
    /// In one transaction: reads the top-up, plans with
    /// `crate::money::recarga::plan_confirmation` and applies the plan (conditional
    /// transition Pendente -> Confirmado, credit of amount plus bonus with its ledger row, move
    /// to the current price table): whatever the order and the repeats, a top-up is credited
    /// once. Safe under concurrency (including other processes).
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError>;
}

/// The simulated PSP's book of PIX charges.
#[async_trait]
pub trait PspStore {
    /// Records a charge created at the simulated PSP.
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        em: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Marks a PSP charge paid (idempotent); false when unknown.
    async fn psp_pay(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, StoreError>;
    /// The charge `payment_id` in the book: amount and payment instant; `None` when unknown.
    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError>;
}

/// What several server processes on one database share besides the data: the per-key request
/// rate and the leases of the periodic jobs.
#[async_trait]
pub trait CoordinationStore {
    /// The per-key rate limiter of a server over this store: `per_second` requests per second
    /// per key. The default keeps its state in this process (right for a database used by one
    /// process); a store shared by several processes keeps it in the database.
    fn limiter(&self, per_second: NonZeroU32) -> Arc<dyn KeyRateLimit> {
        Arc::new(RateLimiter::<ContaId>::new(per_second))
    }

    /// The use of the store's connection pools now (for `GET /metrics`); none by default.
    fn pools(&self) -> Vec<PoolUse> {
        Vec::new()
    }

    /// A cheap round trip to the database (`SELECT 1` on a pooled connection), for the
    /// readiness probe (`GET /readyz`).
    ///
    /// # Errors
    /// The store's error when no connection can be had or the statement fails.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Takes (or renews) the lease of the job `nome` for the process `dono` until `ate`, when it
    /// is free, expired at `now`, or already `dono`'s; returns whether `dono` holds it now.
    /// Atomic across processes: at any instant at most one holder.
    async fn reserve_task(
        &self,
        nome: &str,
        dono: &str,
        now: DateTime<Utc>,
        ate: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
}

/// The server's storage: every area. Implemented by [`SqliteStore`] and [`PgStore`] (and by
/// any type implementing the six area traits). Callers import the area traits they use, or
/// `use crate::store::prelude::*`.
pub trait Store:
    ContasStore
    + ImoveisStore
    + ConsultasStore
    + RecargasStore
    + PspStore
    + SettingsStore
    + CoordinationStore
    + Send
    + Sync
    + fmt::Debug
    + 'static
{
}

impl<T> Store for T where
    T: ContasStore
        + ImoveisStore
        + ConsultasStore
        + RecargasStore
        + PspStore
        + SettingsStore
        + CoordinationStore
        + Send
        + Sync
        + fmt::Debug
        + 'static
{
}

/// How long a charge whose commit reply was lost waits, at most, for the database to tell
/// whether it committed (the lookup is retried within it) before it is journaled.
pub(crate) const OUTCOME_WAIT: std::time::Duration = std::time::Duration::from_secs(6);

/// Pause between two lookups of a lost commit's outcome.
const OUTCOME_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

/// [`ConsultasStore::charge_consulta`], and when its outcome is unknown
/// ([`StoreError::uncertain_outcome`]: the reply of the commit was lost), the outcome learned
/// with [`ConsultasStore::cobranca_outcome`], retried for at most [`OUTCOME_WAIT`]: the charge
/// as its history row recorded it when it was committed (`cache` is then reported as `false`:
/// the consolidation's earlier state is not recorded), the error when it was not (nothing was
/// debited). A refusal whose reply was lost (recorded as 402 or 429, nothing debited) stays an
/// error. When the outcome still cannot be learned, the request id is appended to `journal`
/// (fsynced) before the error is handed back: the answer (500) then claims nothing about the
/// charge, and the journal keeps what the database must still tell.
///
/// # Errors
/// The store's error when the charge was not committed or its outcome cannot be learned.
pub(crate) async fn charge_with_outcome(
    store: &dyn Store,
    cobranca: Cobranca,
    journal: Option<&journal::Journal>,
) -> Result<CobrancaResult, StoreError> {
    let (conta, request_id, em) = (cobranca.conta, cobranca.request_id, cobranca.em);
    let erro = match store.charge_consulta(cobranca).await {
        Err(e) if e.uncertain_outcome() => e,
        outro => return outro,
    };
    let limite = tokio::time::Instant::now() + OUTCOME_WAIT;
    let busca = loop {
        let tentativa =
            tokio::time::timeout_at(limite, store.cobranca_outcome(conta, request_id, em));
        let falha = match tentativa.await {
            Ok(Ok(Some(linha))) if linha.status == 200 => {
                tracing::warn!(%conta, %request_id, "resposta do commit perdida; a cobrança foi gravada");
                return Ok(CobrancaResult::Cobrada {
                    valor: linha.valor,
                    saldo_antes: linha.saldo_antes.unwrap_or_default(),
                    saldo_depois: linha.saldo_depois.unwrap_or_default(),
                    cache: false,
                });
            }
            Ok(Ok(_)) => return Err(erro),
            Ok(Err(busca)) => busca,
            Err(_) => StoreError::ReplyLost("outcome lookup timed out".into()),
        };
        if tokio::time::Instant::now() + OUTCOME_RETRY >= limite {
            break falha;
        }
        tokio::time::sleep(OUTCOME_RETRY).await;
    };
    let entrada = journal::JournalEntry {
        request_id,
        conta,
        em,
    };
    match journal.map(|j| (j, j.append(&entrada))) {
        Some((j, Ok(()))) => {
            tracing::error!(%conta, %request_id, diario = %j.path().display(),
                "resultado da cobrança desconhecido; pedido anotado no diário");
        }
        Some((j, Err(e))) => {
            tracing::error!(%conta, %request_id, diario = %j.path().display(), erro = %e,
                "resultado da cobrança desconhecido e o diário não pôde ser gravado");
        }
        None => {
            tracing::error!(%conta, %request_id, "resultado da cobrança desconhecido; sem diário");
        }
    }
    Err(StoreError::unknown_outcome(&erro, &busca))
}

/// The SQL of the owner lookup of each store, for plan checks (`EXPLAIN`) in tests and benches.
pub mod sql {
    #[cfg(feature = "postgres")]
    pub use super::postgres::{
        CODIGOS_DO_DOCUMENTO as POSTGRES_CODIGOS_DO_DOCUMENTO,
        DONOS_POR_CODIGOS as POSTGRES_DONOS_POR_CODIGOS,
        ITENS_DO_DOCUMENTO as POSTGRES_ITENS_DO_DOCUMENTO,
        imoveis_by_codigos as postgres_imoveis_por_codigos,
    };
    pub use super::sqlite::{
        CODIGOS_DO_DOCUMENTO as SQLITE_CODIGOS_DO_DOCUMENTO,
        DONOS_POR_CODIGO as SQLITE_DONOS_POR_CODIGO, IMOVEL_POR_CODIGO as SQLITE_IMOVEL_POR_CODIGO,
        ITENS_DO_DOCUMENTO as SQLITE_ITENS_DO_DOCUMENTO,
    };
}

/// The area traits, to call any [`Store`] method on a `dyn Store`.
pub mod prelude {
    pub use super::{
        ConsultasStore, ContasStore, CoordinationStore, ImoveisStore, PspStore, RecargasStore,
        SettingsStore, Store,
    };
}
