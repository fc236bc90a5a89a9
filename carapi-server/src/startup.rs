//! Startup in one place: open and migrate the store, load the bundled data into an empty
//! database, bind, serve, run the reconciliation job, shut down gracefully.

use std::net::SocketAddr;
use std::sync::Arc;

use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::auth;
use crate::config::Config;
use crate::fonte;
use crate::money::Centavos;
use crate::state::AppState;
use crate::store::{ContaId, NovaContaRegistro, PgStore, Razao, SqliteStore, Store, StoreError};
use crate::webhook::{self, CABECALHO_ASSINATURA, EventoPix};

/// Errors of the library API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Binding or another I/O operation failed.
    #[error("E/S: {0}")]
    Io(#[from] std::io::Error),
    /// Invalid input to the library API (e.g. a negative initial balance).
    #[error("entrada inválida: {0}")]
    Invalido(String),
    /// The payment, top-up or account does not exist.
    #[error("não encontrado: {0}")]
    NaoEncontrado(String),
    /// Delivering the webhook failed.
    #[error("webhook: {0}")]
    Webhook(String),
    /// Reading data to import failed.
    #[error("importação: {0}")]
    Importacao(String),
}

/// An account to create (`carapi-server account create`, or the library).
#[derive(Debug, Clone)]
pub struct NovaConta {
    /// Initial balance in BRL (2 decimals at most).
    pub saldo: Decimal,
    /// Start on the legacy price table.
    pub legado: bool,
    /// CPF/CNPJ of the linked user; `None` makes `POST /v1/recarga` answer `DOCUMENTO_AUSENTE`.
    pub documento: Option<CpfCnpj>,
    /// E-mail of the linked user.
    pub email: Option<String>,
}

/// A fictitious but valid CPF used by default (`529.982.247-25`, docs/dominio.md test vector).
pub const DOCUMENTO_PADRAO: &str = "52998224725";

impl Default for NovaConta {
    /// Balance 100.00, current prices, a valid fictitious CPF, `cliente@example.com`.
    fn default() -> Self {
        NovaConta {
            saldo: Decimal::new(10_000, 2),
            legado: false,
            documento: CpfCnpj::parse(DOCUMENTO_PADRAO).ok(),
            email: Some("cliente@example.com".into()),
        }
    }
}

/// A created account. The key is shown once and never stored in clear.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContaCriada {
    /// Account id.
    pub conta_id: ContaId,
    /// The API key (`car_` + 64 hex).
    pub api_key: String,
}

impl std::fmt::Debug for ContaCriada {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContaCriada")
            .field("conta_id", &self.conta_id)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

/// Opens (creating and migrating) the store at `database_url`, chosen by its scheme:
/// `postgres://` or `postgresql://` opens a [`PgStore`] (PostgreSQL, for several server
/// processes sharing one database: `carapi-server serve --database postgres://user@host/db`);
/// anything else (`sqlite://carapi.db`, `sqlite::memory:`) the embedded [`SqliteStore`].
///
/// # Errors
/// [`ServerError::Store`] when it cannot be opened or migrated.
pub async fn abrir_store(database_url: &str) -> Result<Arc<dyn Store>, ServerError> {
    if crate::store::postgres::eh_url_postgres(database_url) {
        return Ok(Arc::new(PgStore::connect(database_url).await?));
    }
    Ok(Arc::new(SqliteStore::connect(database_url).await?))
}

/// Creates an account directly in `store` (no server needed; `carapi-server account create`),
/// created now by the system clock.
///
/// # Errors
/// [`ServerError::Invalido`] for a negative balance or one with fractions of a centavo;
/// [`ServerError::Store`] when the store fails.
pub async fn criar_conta(store: &dyn Store, nova: NovaConta) -> Result<ContaCriada, ServerError> {
    criar_conta_em(store, nova, Utc::now()).await
}

/// [`criar_conta`] with the creation instant `em` (a server's clock).
///
/// # Errors
/// As [`criar_conta`].
pub async fn criar_conta_em(
    store: &dyn Store,
    nova: NovaConta,
    em: DateTime<Utc>,
) -> Result<ContaCriada, ServerError> {
    let saldo = Centavos::from_reais(nova.saldo)
        .filter(|c| c.0 >= 0)
        .ok_or_else(|| ServerError::Invalido(format!("saldo inválido: {}", nova.saldo)))?;
    let api_key = auth::gerar_chave();
    let conta_id = store
        .criar_conta(NovaContaRegistro {
            chave_hash: auth::hash_chave(&api_key),
            saldo,
            legado: nova.legado,
            documento: nova.documento,
            email: nova.email,
            em,
        })
        .await?;
    Ok(ContaCriada { conta_id, api_key })
}

/// Loads the bundled CAR records when the store has none; returns how many were loaded.
///
/// # Errors
/// [`ServerError::Store`].
pub async fn carregar_dados_embutidos(store: &dyn Store) -> Result<u64, ServerError> {
    if store.contar_imoveis().await? > 0 {
        return Ok(0);
    }
    Ok(store.gravar_imoveis(&fonte::bundled()).await?)
}

/// Marks `payment_id` paid at `agora` in the simulated PSP's book in `store`, without any
/// webhook: only a status query (reconciliation) will see it.
///
/// # Errors
/// [`ServerError::NaoEncontrado`] for a payment the PSP does not know; [`ServerError::Store`].
pub async fn marcar_pago(
    store: &dyn Store,
    payment_id: &str,
    agora: DateTime<Utc>,
) -> Result<(), ServerError> {
    if store.psp_pagar(payment_id, agora).await? {
        Ok(())
    } else {
        Err(ServerError::NaoEncontrado(format!(
            "cobrança PIX {payment_id}"
        )))
    }
}

/// Marks `payment_id` paid at `agora` in the simulated PSP's book in `store` and delivers the
/// signed webhook to `base_url` (`carapi-server pix pay`). The server credits only what the
/// provider's book has paid, so the book is written first. `webhook_secret` is the server's
/// configured secret, or `None` for the database's own ([`webhook::segredo_do_banco`]).
///
/// # Errors
/// [`ServerError::NaoEncontrado`] for a payment the PSP does not know;
/// [`ServerError::Webhook`] when the delivery fails or is refused.
pub async fn pagar_via_webhook(
    store: &dyn Store,
    base_url: &str,
    webhook_secret: Option<&str>,
    payment_id: &str,
    agora: DateTime<Utc>,
) -> Result<(), ServerError> {
    marcar_pago(store, payment_id, agora).await?;
    let webhook_secret = match webhook_secret {
        Some(s) => s.to_owned(),
        None => webhook::segredo_do_banco(store).await?,
    };
    let corpo = serde_json::to_vec(&EventoPix::pago(payment_id, agora))
        .map_err(|e| ServerError::Webhook(e.to_string()))?;
    let url = format!("{}/webhooks/pix", base_url.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .post(&url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(
            CABECALHO_ASSINATURA,
            webhook::assinar(&webhook_secret, &corpo, agora),
        )
        .body(corpo)
        .send()
        .await
        .map_err(|e| ServerError::Webhook(format!("POST {url}: {e}")))?;
    let status = resp.status();
    if status.is_success() {
        Ok(())
    } else if status == reqwest::StatusCode::NOT_FOUND {
        Err(ServerError::NaoEncontrado(format!(
            "recarga com paymentId {payment_id}"
        )))
    } else {
        let texto = resp.text().await.unwrap_or_default();
        Err(ServerError::Webhook(format!("{status}: {texto}")))
    }
}

/// A server running in this process (started by [`spawn`]).
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    state: AppState,
    cancelar: CancellationToken,
    servidor: JoinHandle<()>,
    reconciliacao: JoinHandle<()>,
}

/// Starts a server: opens and migrates the store, loads the bundled data into an empty one
/// (when configured), binds `config.bind`, serves, and starts the reconciliation job. Returns
/// once the socket is listening.
///
/// # Errors
/// [`ServerError::Store`] when the database cannot be opened; [`ServerError::Io`] when the
/// address cannot be bound.
pub async fn spawn(config: Config) -> Result<RunningServer, ServerError> {
    let store = abrir_store(&config.database_url).await?;
    if config.load_bundled_data {
        let n = carregar_dados_embutidos(store.as_ref()).await?;
        if n > 0 {
            tracing::info!(registros = n, "dados CAR embutidos carregados");
        }
    }
    let listener = TcpListener::bind(config.bind).await?;
    let state = AppState::new(store, config);
    // The database's webhook secret exists from the first start on.
    state.segredo_webhook().await?;
    spawn_com(state, listener).await
}

/// Like [`spawn`] over an already-built state and listener (tests with another clock or PSP).
///
/// # Errors
/// [`ServerError::Io`] when the listener has no local address.
pub async fn spawn_com(
    state: AppState,
    listener: TcpListener,
) -> Result<RunningServer, ServerError> {
    let addr = listener.local_addr()?;
    if let Some(teste) = &state.teste {
        let _ = teste.endereco.set(addr);
    }
    let cancelar = CancellationToken::new();
    let app = crate::http::router(state.clone());
    let sinal = cancelar.clone();
    let borda = state.config.borda.clone();
    let servidor = tokio::spawn(crate::http::servidor::servir(listener, app, borda, sinal));
    let reconciliacao = tokio::spawn(crate::reconcile::laco(
        state.clone(),
        state.config.reconcile_interval,
        cancelar.child_token(),
    ));
    tracing::info!(%addr, "carapi-server ouvindo");
    Ok(RunningServer {
        addr,
        state,
        cancelar,
        servidor,
        reconciliacao,
    })
}

impl RunningServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The store (for tests and operator tools).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.state.store
    }

    /// The handler state.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Creates an account, at the server clock's instant, and returns its key (shown once).
    ///
    /// # Errors
    /// As [`criar_conta`].
    pub async fn criar_conta(&self, nova: NovaConta) -> Result<ContaCriada, ServerError> {
        criar_conta_em(self.state.store.as_ref(), nova, self.state.relogio.agora()).await
    }

    /// Plays the payer and the PSP: marks `payment_id` paid and delivers the signed webhook to
    /// this server. Returns once the webhook was accepted (the top-up is then `Confirmado`).
    ///
    /// # Errors
    /// [`ServerError::NaoEncontrado`] when no charge has this id; [`ServerError::Webhook`].
    pub async fn pagar(&self, payment_id: &str) -> Result<(), ServerError> {
        let segredo = self.state.segredo_webhook().await?;
        pagar_via_webhook(
            self.state.store.as_ref(),
            &self.base_url(),
            Some(&segredo),
            payment_id,
            self.state.relogio.agora(),
        )
        .await
    }

    /// [`RunningServer::pagar`] by top-up id.
    ///
    /// # Errors
    /// [`ServerError::NaoEncontrado`] when no top-up has this id; as [`RunningServer::pagar`].
    pub async fn pagar_recarga(&self, recarga_id: Uuid) -> Result<(), ServerError> {
        let r = self
            .state
            .store
            .recarga_por_id(recarga_id)
            .await?
            .ok_or_else(|| ServerError::NaoEncontrado(format!("recarga {recarga_id}")))?;
        self.pagar(&r.payment_id).await
    }

    /// Runs one reconciliation pass now; returns how many top-ups it credited.
    ///
    /// # Errors
    /// [`ServerError::Store`].
    pub async fn reconciliar(&self) -> Result<u32, ServerError> {
        Ok(crate::reconcile::executar(&self.state.store, &self.state.pix).await?)
    }

    /// The ledger check of `conta_id`: balance, credits, debits and what the history and the
    /// top-ups say ([`Razao::consistente`]).
    ///
    /// # Errors
    /// [`ServerError::NaoEncontrado`] for an unknown account; [`ServerError::Store`].
    pub async fn verificar_razao(&self, conta_id: ContaId) -> Result<Razao, ServerError> {
        self.state
            .store
            .razao(conta_id)
            .await?
            .ok_or_else(|| ServerError::NaoEncontrado(format!("conta {conta_id}")))
    }

    /// Stops accepting connections, lets in-flight requests finish, stops the jobs.
    pub async fn shutdown(self) {
        self.cancelar.cancel();
        let _ = self.servidor.await;
        let _ = self.reconciliacao.await;
    }

    /// Resolves when the server has stopped (e.g. after a signal triggered the token).
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancelar.clone()
    }
}
