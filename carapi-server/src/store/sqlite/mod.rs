//! [`Store`] over SQLite (sqlx 0.8) in WAL mode.
//!
//! Writes go through a single-connection pool and every read-then-write transaction starts with
//! `BEGIN IMMEDIATE`, so the balance check and the debit cannot interleave with another writer,
//! in this process or another one sharing the file (`busy_timeout` makes other processes wait
//! instead of failing). Reads use a separate pool and never block writers (WAL).
//!
//! The lookups (charges and uncharged history rows) go to a dedicated writer thread instead
//! ([`escritor`]): one transaction per lookup, in one hop, group-committed. An in-memory URL
//! (`sqlite::memory:`) gets a private temporary database file, removed with the store, so that
//! the writer's connection sees the same database as the pools.

mod configuracao;
mod consultas;
mod contas;
mod escritor;
mod historico;
mod imoveis;
mod linhas;
mod recargas;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj, RecargaStatus};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};
use uuid::Uuid;

// `escritor` reaches these as `super::{ms, primeiro_dia_mes}`.
use linhas::{ms, primeiro_dia_mes};

use super::*;
use crate::dados::Imovel;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// SQLite implementation of [`Store`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    escrita: SqlitePool,
    leitura: SqlitePool,
    /// History and usage reads: their own small pool, so that they never hold the
    /// connections balance reads and lookups need.
    historico: SqlitePool,
    /// The lookup writer thread.
    escritor: escritor::Escritor,
    /// The folder of an in-memory URL's database file; declared last, so it is removed after
    /// the connections above are dropped.
    _temporario: Option<Arc<tempfile::TempDir>>,
}

impl SqliteStore {
    /// Opens (creating when missing) and migrates the database at `url` (`sqlite://file.db`, or
    /// `sqlite::memory:` for a private temporary database removed with the store).
    ///
    /// # Errors
    /// [`StoreError`] when the URL is invalid, the file cannot be opened or migrations fail.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let memoria = url.contains(":memory:") || url.contains("mode=memory");
        let (url, temporario) = if memoria {
            let dir = tempfile::Builder::new()
                .prefix("carapi-memoria-")
                .tempdir()
                .map_err(sqlx::Error::Io)?;
            (
                format!("sqlite://{}", dir.path().join("carapi.db").display()),
                Some(Arc::new(dir)),
            )
        } else {
            (url.to_owned(), None)
        };
        let opts = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30))
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal);
        let escrita = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts.clone())
            .await?;
        MIGRATOR.run(&escrita).await?;
        let escritor = escritor::Escritor::abrir(opts.get_filename())?;
        let leitura = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts.clone())
            .await?;
        let historico = SqlitePoolOptions::new()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts)
            .await?;
        Ok(SqliteStore {
            escrita,
            leitura,
            historico,
            escritor,
            _temporario: temporario,
        })
    }

    async fn imediata(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.escrita.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Closes the pools.
    pub async fn close(&self) {
        self.escrita.close().await;
        self.leitura.close().await;
        self.historico.close().await;
    }

    /// `EXPLAIN QUERY PLAN` lines of the history statements for `f` (tests: each filter
    /// combination is served by its index).
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn plano_historico(
        &self,
        conta: ContaId,
        f: &FiltroHistorico,
    ) -> Result<Vec<String>, StoreError> {
        historico::plano_historico(self, conta, f).await
    }

    /// `EXPLAIN QUERY PLAN` lines of the usage statements since `desde`.
    ///
    /// # Errors
    /// [`StoreError`] when the database fails.
    pub async fn plano_uso(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        historico::plano_uso(self, conta, desde).await
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn criar_conta(&self, nova: NovaContaRegistro) -> Result<ContaId, StoreError> {
        contas::criar_conta(self, nova).await
    }

    async fn conta_por_chave(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        contas::conta_por_chave(self, chave_hash).await
    }

    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        contas::conta(self, id).await
    }

    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        contas::contas(self).await
    }

    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        contas::atualizar_limites(self, id, diario, mensal).await
    }

    async fn contar_imoveis(&self) -> Result<u64, StoreError> {
        imoveis::contar_imoveis(self).await
    }

    async fn gravar_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        imoveis::gravar_imoveis(self, imoveis).await
    }

    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError> {
        imoveis::imovel(self, codigo).await
    }

    async fn imoveis_do_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        imoveis::imoveis_do_documento(self, documento, limite).await
    }

    async fn registrar_consulta(&self, r: RegistroConsulta) -> Result<(), StoreError> {
        consultas::registrar_consulta(self, r).await
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        consultas::cobrar_consulta(self, c).await
    }

    async fn uso_periodo(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriodo, StoreError> {
        consultas::uso_periodo(self, conta, dia).await
    }

    async fn historico(
        &self,
        conta: ContaId,
        f: &FiltroHistorico,
    ) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
        historico::historico(self, conta, f).await
    }

    async fn uso_por_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        historico::uso_por_endpoint(self, conta, desde).await
    }

    async fn recarga_reaproveitavel(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        recargas::recarga_reaproveitavel(self, conta, valor, desde).await
    }

    async fn inserir_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        recargas::inserir_recarga(self, nova, desde).await
    }

    async fn completar_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        recargas::completar_recarga(self, id, qr_code).await
    }

    async fn descartar_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        recargas::descartar_recarga(self, id).await
    }

    async fn recarga_por_payment_id(
        &self,
        payment_id: &str,
    ) -> Result<Option<Recarga>, StoreError> {
        recargas::recarga_por_payment_id(self, payment_id).await
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        recargas::recarga(self, conta, id).await
    }

    async fn recarga_por_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        recargas::recarga_por_id(self, id).await
    }

    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        recargas::recargas(self, conta, status, page, size).await
    }

    async fn recargas_pendentes(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        recargas::recargas_pendentes(self, limite).await
    }

    async fn confirmar_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmacao, StoreError> {
        recargas::confirmar_recarga(self, payment_id, em).await
    }

    async fn psp_registrar(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        em: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        recargas::psp_registrar(self, payment_id, valor, documento, email, em).await
    }

    async fn psp_pagar(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, StoreError> {
        recargas::psp_pagar(self, payment_id, em).await
    }

    async fn psp_situacao(&self, payment_id: &str) -> Result<Option<CobrancaPsp>, StoreError> {
        recargas::psp_situacao(self, payment_id).await
    }

    async fn razao(&self, conta: ContaId) -> Result<Option<Razao>, StoreError> {
        contas::razao(self, conta).await
    }
}
