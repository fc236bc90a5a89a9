//! Startup in one place, the composition root: open and migrate the store, load the bundled
//! data into an empty database, pick the implementations the configuration asks for, bind,
//! serve, run the reconciliation job, shut down gracefully.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::config::Config;
use crate::contas::{ContaCriada, NovaConta, criar_conta_em};
use crate::erro::ServerError;
use crate::http::Acrescimos;
use crate::http::servidor::{Conexoes, Diretas, servir_com};
use crate::pix::pagamento::pagar_via_webhook;
use crate::state::AppState;
use crate::store::{ContaId, Razao, SqliteStore, Store};

/// Opens (creating and migrating) the store at `database_url`, chosen by its scheme:
/// `postgres://` or `postgresql://` opens a [`PgStore`] (PostgreSQL, for several server
/// processes sharing one database: `carapi-server serve --database postgres://user@host/db`);
/// anything else (`sqlite://carapi.db`, `sqlite::memory:`) the embedded [`SqliteStore`].
///
/// # Errors
/// [`ServerError::Store`] when it cannot be opened or migrated.
pub async fn abrir_store(database_url: &str) -> Result<Arc<dyn Store>, ServerError> {
    if crate::store::eh_url_postgres(database_url) {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(
            crate::store::PgStore::connect(database_url).await?,
        ));
        #[cfg(not(feature = "postgres"))]
        return Err(ServerError::Invalido(
            "este build não inclui PostgreSQL (feature `postgres` de carapi-service); use sqlite://"
                .to_owned(),
        ));
    }
    Ok(Arc::new(SqliteStore::connect(database_url).await?))
}

/// Loads the bundled CAR records when the store has none; returns how many were loaded.
///
/// # Errors
/// [`ServerError::Store`].
pub async fn carregar_dados_embutidos(store: &dyn Store) -> Result<u64, ServerError> {
    if store.contar_imoveis().await? > 0 {
        return Ok(0);
    }
    Ok(store.gravar_imoveis(&crate::dados::bundled()).await?)
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
/// address cannot be bound; [`ServerError::Invalido`] when [`Config::webhook_secret`] is
/// shorter than [`crate::webhook::SEGREDO_MINIMO`] bytes.
pub async fn spawn(config: Config) -> Result<RunningServer, ServerError> {
    let (state, listener) = preparar(config).await?;
    spawn_com(state, listener).await
}

/// What every server needs before serving: the store opened and migrated, the bundled data in
/// an empty one (when configured), the state (system clock), the socket bound, the database's
/// webhook secret created.
///
/// # Errors
/// As [`spawn`].
pub async fn preparar(config: Config) -> Result<(AppState, TcpListener), ServerError> {
    crate::webhook::validar_segredo(config.webhook_secret.as_deref())?;
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
    Ok((state, listener))
}

/// Like [`spawn`] over an already-built state and listener (tests with another clock or PSP).
///
/// # Errors
/// [`ServerError::Io`] when the listener has no local address.
pub async fn spawn_com(
    state: AppState,
    listener: TcpListener,
) -> Result<RunningServer, ServerError> {
    let intervalo = state.config.reconcile_interval;
    iniciar(
        state,
        listener,
        Acrescimos::default(),
        Diretas,
        move |st, parar| crate::reconcile::laco(st, intervalo, parar),
    )
}

/// Serves `state` on `listener` with what the assembler adds (`acrescimos`, `conexoes`) and
/// runs `tarefas` (the background jobs) until shutdown.
///
/// # Errors
/// [`ServerError::Io`] when the listener has no local address.
pub fn iniciar<C, F, T>(
    state: AppState,
    listener: TcpListener,
    acrescimos: Acrescimos,
    conexoes: C,
    tarefas: F,
) -> Result<RunningServer, ServerError>
where
    C: Conexoes,
    F: FnOnce(AppState, CancellationToken) -> T,
    T: Future<Output = ()> + Send + 'static,
{
    let addr = listener.local_addr()?;
    let cancelar = CancellationToken::new();
    let app = crate::http::router_com(state.clone(), acrescimos);
    let borda = state.config.borda.clone();
    let servidor = tokio::spawn(servir_com(listener, app, borda, cancelar.clone(), conexoes));
    let reconciliacao = tokio::spawn(tarefas(state.clone(), cancelar.child_token()));
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
    /// As [`crate::criar_conta`].
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
