//! Storage behind one trait per area: accounts and the ledger ([`ContasStore`]), CAR records
//! ([`ImoveisStore`]), lookups with their history and limit counters ([`ConsultasStore`]),
//! top-ups ([`RecargasStore`]), the simulated PSP's book ([`PspStore`]) and what processes on
//! one database share ([`CoordenacaoStore`]); [`Store`] is all of them. All SQL lives in the
//! implementations ([`SqliteStore`], [`PgStore`], one file per area); handlers only call these
//! methods. The charge decision itself is not here: both stores call [`crate::regras::decidir`].
//!
//! Money is [`Centavos`]; instants are UTC; the caller passes the Brasília calendar day (the
//! store never decides time zones).

pub mod historico;
pub mod postgres;
mod sqlite;

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj, EndpointConsulta, RecargaStatus, StatusConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::dados::Imovel;
use crate::limite_chave::LimitePorChave;
use crate::limits::Limitador;
use crate::money::Centavos;

pub use historico::JANELA_BUSCA;
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// Seconds after which a top-up row still being created (its provider call never returned:
/// the process died) is no longer reused ([`crate::pix::reserva`]).
pub const PRAZO_CRIACAO_S: i64 = 15;

/// Identifier of an API account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContaId(pub i64);

impl fmt::Display for ContaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for ContaId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(ContaId)
    }
}

/// A storage failure. Handlers turn it into 500 `ERRO_INTERNO` and log the detail.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database driver failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// Migrations failed.
    #[error("migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The SQLite lookup writer's connection (rusqlite) failed.
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The SQLite lookup writer could not commit the group this request was part of (nothing
    /// of the group was written).
    #[error("database: group commit failed: {0}")]
    Lote(String),
    /// The SQLite lookup writer thread is gone (store closed or thread not started).
    #[error("database writer stopped")]
    EscritorParado,
    /// A stored value could not be read back (corrupt or foreign data).
    #[error("stored value unreadable: {0}")]
    Corrupt(String),
}

/// An API account as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct Conta {
    /// Account id.
    pub id: ContaId,
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
pub struct NovaContaRegistro {
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

/// Merge-patch of one limit (contract, `PUT /v1/limites`): `None` keeps, `Some(None)` removes,
/// `Some(Some(v))` sets.
pub type Patch<T> = Option<Option<T>>;

/// A lookup that is recorded without a debit (any non-200 outcome decided before charging).
#[derive(Debug, Clone)]
pub struct RegistroConsulta {
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

/// A charged lookup about to be answered with 200.
#[derive(Debug, Clone)]
pub struct Cobranca {
    /// The account.
    pub conta: ContaId,
    /// Which endpoint.
    pub endpoint: EndpointConsulta,
    /// The looked-up key, normalised.
    pub chave: String,
    /// Price under the account's table at the time of the transaction: the legacy flag is read
    /// inside the transaction, so both tables are passed.
    pub preco_atual: Centavos,
    /// Legacy price of the endpoint.
    pub preco_legado: Centavos,
    /// CAR record to mark as consolidated (its previous state gives `cache`).
    pub consolidar: Option<CodigoCar>,
    /// When.
    pub em: DateTime<Utc>,
    /// Brasília day of `em`.
    pub dia: NaiveDate,
}

impl Cobranca {
    /// The endpoint's price under both tables, for [`crate::regras::decidir`].
    pub fn precos(&self) -> crate::regras::Precos {
        crate::regras::Precos {
            atual: self.preco_atual,
            legado: self.preco_legado,
        }
    }
}

/// Outcome of [`ConsultasStore::cobrar_consulta`]. Every variant has already been recorded in the
/// history, in the same transaction as the debit and the counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResultadoCobranca {
    /// Debited.
    Cobrada {
        /// Price charged.
        valor: Centavos,
        /// Balance before.
        saldo_antes: Centavos,
        /// Balance after.
        saldo_depois: Centavos,
        /// The record had already been consolidated by an earlier lookup.
        cache: bool,
    },
    /// 402: the balance does not cover the price; nothing debited.
    SaldoInsuficiente {
        /// Balance.
        saldo: Centavos,
        /// Price.
        preco: Centavos,
    },
    /// 429: the daily limit of charged lookups is reached.
    LimiteDiario {
        /// The limit.
        limite: u32,
    },
    /// 429: the charge would pass the monthly spending ceiling.
    LimiteMensal {
        /// The ceiling.
        limite: Centavos,
        /// Spent this month.
        gasto: Centavos,
    },
}

/// Counters for `usoHoje` / `usoMes` of `GET /v1/saldo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsoPeriodo {
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
pub struct FiltroHistorico {
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
pub struct ConsultaRegistrada {
    /// When.
    pub em: DateTime<Utc>,
    /// Registered endpoint form.
    pub endpoint: String,
    /// Looked-up key.
    pub chave: Option<String>,
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

/// A stored top-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recarga {
    /// Id.
    pub id: Uuid,
    /// Owner account.
    pub conta: ContaId,
    /// Payment id at the PSP.
    pub payment_id: String,
    /// Amount paid.
    pub valor: Centavos,
    /// Bonus percent fixed at creation.
    pub percentual_bonus: u32,
    /// Bonus fixed at creation.
    pub bonus: Centavos,
    /// State.
    pub status: RecargaStatus,
    /// BR Code payload.
    pub qr_code: String,
    /// Creation instant.
    pub criada_em: DateTime<Utc>,
    /// Confirmation instant.
    pub confirmada_em: Option<DateTime<Utc>>,
}

/// Outcome of [`RecargasStore::confirmar_recarga`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmacao {
    /// This call moved it Pendente -> Confirmado and credited amount plus bonus.
    Creditada(Recarga),
    /// It was already final; nothing changed.
    JaFinal(Recarga),
    /// No top-up has this payment id.
    NaoEncontrada,
}

/// Ledger check of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Razao {
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
}

impl Razao {
    /// True when `saldo == creditos - debitos`, the debits equal what the history says was
    /// charged, and the credits equal the initial balance plus confirmed top-ups.
    pub fn consistente(&self) -> bool {
        self.saldo == self.creditos - self.debitos
            && self.debitos == self.cobrado_historico
            && self.creditos == self.saldo_inicial + self.creditado_recargas
            && self.saldo >= Centavos::ZERO
    }
}

impl Recarga {
    /// True while the provider charge is being created: the row exists (reuse is decided on
    /// it) but its BR Code is not filled in yet ([`crate::pix::reserva`]). Such a row is not
    /// listed, not shown to its account and not reconciled.
    pub fn em_criacao(&self) -> bool {
        self.qr_code.is_empty()
    }
}

/// A charge in the simulated PSP's book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CobrancaPsp {
    /// Amount of the charge.
    pub valor: Centavos,
    /// When it was paid; `None` while pending.
    pub paga_em: Option<DateTime<Utc>>,
}

/// Server settings kept in the database (`configuracao` table).
#[async_trait]
pub trait ConfiguracaoStore {
    /// The value of `chave`, storing `valor` first when there is none; atomic: concurrent
    /// first calls, in any process, all get the value that was stored.
    async fn configuracao_ou_inserir(&self, chave: &str, valor: &str)
    -> Result<String, StoreError>;
}

/// Accounts, their limits and the ledger check.
#[async_trait]
pub trait ContasStore {
    /// Creates an account (and its initial-balance ledger credit).
    async fn criar_conta(&self, nova: NovaContaRegistro) -> Result<ContaId, StoreError>;
    /// The account whose key hashes to `chave_hash`.
    async fn conta_por_chave(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError>;
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
    async fn razao(&self, conta: ContaId) -> Result<Option<Razao>, StoreError>;
}

/// CAR records and their owners.
#[async_trait]
pub trait ImoveisStore {
    /// Number of stored records.
    async fn contar_imoveis(&self) -> Result<u64, StoreError>;
    /// Inserts or replaces records by CAR code (idempotent); returns how many were written.
    async fn gravar_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError>;
    /// The record of `codigo`.
    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError>;
    /// The first `limite` records tied to `documento`, ordered by CAR code, and whether there
    /// are more.
    async fn imoveis_do_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError>;
    /// What `GET /v1/proprietario/{cpfCnpj}` shows of the first `limite` records tied to
    /// `documento`, ordered by CAR code, and whether there are more: one indexed query reading
    /// only the item's columns (no owners, no dates), whatever the owner's size.
    async fn itens_do_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<ImovelDoDono>, bool), StoreError>;
}

/// The columns of a record that an owner lookup's item shows (contract, `ProprietarioItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImovelDoDono {
    /// CAR code.
    pub codigo_car: CodigoCar,
    /// Protocol number.
    pub codigo_protocolo: Option<String>,
    /// Property name.
    pub nome_imovel: Option<String>,
    /// Registry (matrícula) number.
    pub matricula_numero: Option<String>,
    /// Municipality name.
    pub municipio: String,
    /// State code (`MT`).
    pub uf: String,
    /// Total area, hectares.
    pub area_total_ha: rust_decimal::Decimal,
}

impl From<&Imovel> for ImovelDoDono {
    fn from(i: &Imovel) -> Self {
        ImovelDoDono {
            codigo_car: i.codigo_car.clone(),
            codigo_protocolo: i.codigo_protocolo.clone(),
            nome_imovel: i.nome_imovel.clone(),
            matricula_numero: i.matricula_numero.clone(),
            municipio: i.municipio.clone(),
            uf: i.uf.clone(),
            area_total_ha: i.area_total_ha,
        }
    }
}

/// Lookups: the charge, the uncharged record, the history and the usage counters.
#[async_trait]
pub trait ConsultasStore {
    /// Records a lookup that is not charged (and counts it in the day's counters).
    async fn registrar_consulta(&self, registro: RegistroConsulta) -> Result<(), StoreError>;
    /// In one transaction: reads the account and the counters the limits need, applies
    /// [`crate::regras::decidir`], debits, writes the history row and the counters; a refusal
    /// is recorded with its status and debits nothing. Atomic and safe under concurrency
    /// (including other processes sharing the database).
    async fn cobrar_consulta(&self, cobranca: Cobranca) -> Result<ResultadoCobranca, StoreError>;
    /// Counters of `dia` and of its month.
    async fn uso_periodo(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriodo, StoreError>;
    /// A page of the history, newest first, and the total matching the filter.
    async fn historico(
        &self,
        conta: ContaId,
        filtro: &FiltroHistorico,
    ) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError>;
    /// Per-endpoint aggregates since `desde`.
    async fn uso_por_endpoint(
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
    async fn recarga_reaproveitavel(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError>;
    /// Stores `nova` unless a reusable one (same account and amount, pending, created at or
    /// after `desde`; one still being created counts unless older than [`PRAZO_CRIACAO_S`]
    /// before `nova.criada_em`) exists, in one transaction; returns the top-up and whether it
    /// was reused. `nova` may be a row being created (empty `qr_code`).
    async fn inserir_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError>;
    /// Fills in the BR Code of the top-up `id` being created.
    async fn completar_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError>;
    /// Deletes the top-up `id` if it is still being created (its provider call failed).
    async fn descartar_recarga(&self, id: Uuid) -> Result<(), StoreError>;
    /// The top-up `id` of `conta` (None when missing, another account's or being created).
    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up `id`, whatever the account, also while being created (operator tools).
    async fn recarga_por_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up whose payment id is `payment_id` (webhook).
    async fn recarga_por_payment_id(&self, payment_id: &str)
    -> Result<Option<Recarga>, StoreError>;
    /// A page of the account's top-ups, newest first, and the total.
    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError>;
    /// Up to `limite` pending top-ups of every account, oldest first.
    async fn recargas_pendentes(&self, limite: u32) -> Result<Vec<Recarga>, StoreError>;
    /// Conditional transition Pendente -> Confirmado and the ledger credit of amount plus bonus
    /// (and the move to the current price table) in one transaction: whatever the order and the
    /// repeats, a top-up is credited once. Safe under concurrency (including other processes).
    async fn confirmar_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmacao, StoreError>;
}

/// The simulated PSP's book of PIX charges.
#[async_trait]
pub trait PspStore {
    /// Records a charge created at the simulated PSP.
    async fn psp_registrar(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        em: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Marks a PSP charge paid (idempotent); false when unknown.
    async fn psp_pagar(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, StoreError>;
    /// The charge `payment_id` in the book: amount and payment instant; `None` when unknown.
    async fn psp_situacao(&self, payment_id: &str) -> Result<Option<CobrancaPsp>, StoreError>;
}

/// What several server processes on one database share besides the data: the per-key request
/// rate and the leases of the periodic jobs.
#[async_trait]
pub trait CoordenacaoStore {
    /// The per-key rate limiter of a server over this store: `por_segundo` requests per second
    /// per key. The default keeps its state in this process (right for a database used by one
    /// process); a store shared by several processes keeps it in the database.
    fn limitador(&self, por_segundo: NonZeroU32) -> Arc<dyn LimitePorChave> {
        Arc::new(Limitador::<ContaId>::new(por_segundo))
    }

    /// Takes (or renews) the lease of the job `nome` for the process `dono` until `ate`, when it
    /// is free, expired at `agora`, or already `dono`'s; returns whether `dono` holds it now.
    /// Atomic across processes: at any instant at most one holder.
    async fn reservar_tarefa(
        &self,
        nome: &str,
        dono: &str,
        agora: DateTime<Utc>,
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
    + ConfiguracaoStore
    + CoordenacaoStore
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
        + ConfiguracaoStore
        + CoordenacaoStore
        + Send
        + Sync
        + fmt::Debug
        + 'static
{
}

/// The SQL of the owner lookup of each store, for plan checks (`EXPLAIN`) in tests and benches.
pub mod sql {
    pub use super::postgres::{
        CODIGOS_DO_DOCUMENTO as POSTGRES_CODIGOS_DO_DOCUMENTO,
        DONOS_POR_CODIGOS as POSTGRES_DONOS_POR_CODIGOS,
        ITENS_DO_DOCUMENTO as POSTGRES_ITENS_DO_DOCUMENTO,
        imoveis_por_codigos as postgres_imoveis_por_codigos,
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
        ConfiguracaoStore, ConsultasStore, ContasStore, CoordenacaoStore, ImoveisStore, PspStore,
        RecargasStore, Store,
    };
}
