//! Startup in one place, the composition root: open and migrate the store, load the bundled
//! data into an empty database, pick the implementations the configuration asks for, bind,
//! serve, run the reconciliation job, shut down gracefully.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::config::Config;
use crate::contas::{ContaCriada, NovaConta, create_conta_at};
use crate::error::ServerError;
use crate::http::Extensions;
use crate::http::server::{Connections, Plain, serve_with};
use crate::pix::payment::pay_via_webhook;
use crate::state::AppState;
use crate::store::{ContaId, Ledger, OpenMode, SqliteStore, Store};

/// Opens (creating and migrating) the store at `database_url`, chosen by its scheme:
/// `postgres://` or `postgresql://` opens a `PgStore` (PostgreSQL, for several server
/// processes sharing one database: `carapi-server serve --database postgres://user@host/db`);
/// anything else (`sqlite://carapi.db`, `sqlite::memory:`) the embedded [`SqliteStore`].
///
/// # Errors
/// [`ServerError::Store`] when it cannot be opened or migrated.
pub async fn open_store(database_url: &str) -> Result<Arc<dyn Store>, ServerError> {
    open_store_as(database_url, OpenMode::Migrate).await
}

/// [`open_store`] as `mode` says ([`OpenMode`]): the admin commands open an existing database
/// and never migrate it.
///
/// # Errors
/// [`ServerError::Store`] when it cannot be opened (missing where it may not be created) or its
/// schema is not this binary's where it may not be migrated.
pub async fn open_store_as(
    database_url: &str,
    mode: OpenMode,
) -> Result<Arc<dyn Store>, ServerError> {
    if crate::store::is_postgres_url(database_url) {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(
            crate::store::PgStore::open(database_url, mode).await?,
        ));
        #[cfg(not(feature = "postgres"))]
        return Err(ServerError::Invalid(
            "este build não inclui PostgreSQL (feature `postgres` de carapi-service); use sqlite://"
                .to_owned(),
        ));
    }
    Ok(Arc::new(SqliteStore::open(database_url, mode).await?))
}

/// The setting (`configuracao` table) written when the server loads the bundled records into an
/// empty store: the start-up warning about demonstration records reads it, so that records
/// loaded with `importar` (the same public extracts complete alike) are never called
/// demonstration data.
const BUNDLED_SETTING: &str = "dados_embutidos_carregados";

/// Loads the bundled CAR records when the store has none, and records that it did
/// (`BUNDLED_SETTING`); returns how many were loaded.
///
/// # Errors
/// [`ServerError::Store`].
pub async fn load_bundled_data(store: &dyn Store) -> Result<u64, ServerError> {
    if store.count_imoveis().await? > 0 {
        return Ok(0);
    }
    let n = store.write_imoveis(&crate::dados::bundled()).await?;
    store
        .settings_or_insert(BUNDLED_SETTING, &n.to_string())
        .await?;
    Ok(n)
}

/// How many bundled demonstration records (fictitious owners included) the store serves, for
/// the start-up log: the bundled codes it holds when the server loaded them
/// (`BUNDLED_SETTING`); on a store without that record (an older one), the bundled records
/// when they are all it holds. A store loaded with `importar` holds none.
///
/// # Errors
/// [`ServerError::Store`].
pub(crate) async fn bundled_served(store: &dyn Store) -> Result<u64, ServerError> {
    let bundled = crate::dados::bundled();
    let loaded_here = store.setting(BUNDLED_SETTING).await?.is_some();
    if !loaded_here && store.count_imoveis().await? != bundled.len() as u64 {
        return Ok(0);
    }
    let mut n = 0;
    for imovel in &bundled {
        if store.imovel(&imovel.codigo_car).await?.is_some() {
            n += 1;
        }
    }
    if !loaded_here && n != bundled.len() as u64 {
        return Ok(0);
    }
    Ok(n)
}

/// A server running in this process (started by [`spawn`]).
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    state: AppState,
    cancel: CancellationToken,
    server: JoinHandle<()>,
    reconciliation: JoinHandle<()>,
}

/// Starts a server: opens and migrates the store, loads the bundled data into an empty one
/// (when configured), binds `config.bind`, serves, and starts the reconciliation job. Returns
/// once the socket is listening.
///
/// # Errors
/// [`ServerError::Store`] when the database cannot be opened; [`ServerError::Io`] when the
/// address cannot be bound; [`ServerError::Invalid`] when [`Config::webhook_secret`] is
/// shorter than `crate::pix::webhook::MIN_SECRET_LEN` bytes.
pub async fn spawn(config: Config) -> Result<RunningServer, ServerError> {
    let (state, listener) = prepare(config).await?;
    spawn_with(state, listener).await
}

/// What every server needs before serving: the store opened and migrated, the bundled data in
/// an empty one (when configured), the state (system clock), the socket bound, the database's
/// webhook secret created.
///
/// # Errors
/// As [`spawn`].
pub async fn prepare(config: Config) -> Result<(AppState, TcpListener), ServerError> {
    crate::pix::webhook::validate_secret(config.webhook_secret.as_deref())?;
    let store = open_store(&config.database_url).await?;
    if config.load_bundled_data {
        let n = load_bundled_data(store.as_ref()).await?;
        if n > 0 {
            tracing::info!(registros = n, "dados CAR embutidos carregados");
        }
    }
    let demo = bundled_served(store.as_ref()).await?;
    if demo > 0 {
        tracing::warn!(
            registros = demo,
            "{demo} registros de demonstração embutidos (fictícios) servidos e cobrados; \
             use --sem-dados-embutidos num banco novo para não carregá-los"
        );
    } else {
        tracing::info!("0 registros de demonstração embutidos servidos");
    }
    let listener = TcpListener::bind(config.bind).await?;
    let state = AppState::new(store, config);
    // Charges journaled by an earlier run whose commit outcome was lost: reversed once now.
    state.settle_journal().await;
    // The database's webhook secret exists from the first start on.
    state.webhook_secret().await?;
    Ok((state, listener))
}

/// Like [`spawn`] over an already-built state and listener (tests with another clock or PSP).
///
/// # Errors
/// [`ServerError::Io`] when the listener has no local address.
pub async fn spawn_with(
    state: AppState,
    listener: TcpListener,
) -> Result<RunningServer, ServerError> {
    let interval = state.config.reconcile_interval;
    start(
        state,
        listener,
        Extensions::default(),
        Plain,
        move |st, stop| jobs(st, interval, stop),
    )
}

/// Serves `state` on `listener` with what the assembler adds (`acrescimos`, `conexoes`) and
/// runs `tasks` (the background jobs) until shutdown.
///
/// # Errors
/// [`ServerError::Io`] when the listener has no local address or
/// [`Config::metrics_bind`] cannot be bound.
pub fn start<C, F, T>(
    state: AppState,
    listener: TcpListener,
    extensions: Extensions,
    connections: C,
    tasks: F,
) -> Result<RunningServer, ServerError>
where
    C: Connections,
    F: FnOnce(AppState, CancellationToken) -> T,
    T: Future<Output = ()> + Send + 'static,
{
    let addr = listener.local_addr()?;
    let cancel = CancellationToken::new();
    let app = crate::http::router_with(state.clone(), extensions);
    let edge = state.config.edge.clone();
    let server = tokio::spawn(serve_with(listener, app, edge, cancel.clone(), connections));
    let metrics_addr = match state.config.metrics_bind {
        Some(bind) => Some(serve_metrics(bind, &state, &cancel)?),
        None => None,
    };
    let reconciliation = tokio::spawn(tasks(state.clone(), cancel.child_token()));
    tracing::info!(%addr, "carapi-server ouvindo");
    Ok(RunningServer {
        addr,
        metrics_addr,
        state,
        cancel,
        server,
        reconciliation,
    })
}

/// Binds `bind` and serves `GET /metrics` of `state` there until `cancelar` fires; returns the
/// bound address.
fn serve_metrics(
    bind: SocketAddr,
    state: &AppState,
    cancel: &CancellationToken,
) -> Result<SocketAddr, ServerError> {
    let listener = std::net::TcpListener::bind(bind)?;
    listener.set_nonblocking(true)?;
    let listener = TcpListener::from_std(listener)?;
    let addr = listener.local_addr()?;
    let app = crate::http::probes::metrics_router(state.clone());
    let stop = cancel.clone();
    tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
        if let Err(e) = serve.await {
            tracing::warn!(erro = %e, "endereço das métricas encerrado com erro");
        }
    });
    tracing::info!(%addr, "métricas em /metrics deste endereço");
    Ok(addr)
}

impl RunningServer {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address `GET /metrics` is served on when it has its own
    /// ([`Config::metrics_bind`]).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
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
    /// As [`crate::create_conta`].
    pub async fn create_conta(&self, fresh: NovaConta) -> Result<ContaCriada, ServerError> {
        create_conta_at(self.state.store.as_ref(), fresh, self.state.clock.now()).await
    }

    /// Plays the payer and the PSP: marks `payment_id` paid and delivers the signed webhook to
    /// this server. Returns once the webhook was accepted (the top-up is then `Confirmado`).
    ///
    /// # Errors
    /// [`ServerError::NotFound`] when no charge has this id; [`ServerError::Webhook`].
    pub async fn pay(&self, payment_id: &str) -> Result<(), ServerError> {
        let secret = self.state.webhook_secret().await?;
        pay_via_webhook(
            self.state.store.as_ref(),
            &self.base_url(),
            &secret,
            payment_id,
            self.state.clock.now(),
        )
        .await
    }

    /// [`RunningServer::pay`] by top-up id.
    ///
    /// # Errors
    /// [`ServerError::NotFound`] when no top-up has this id; as [`RunningServer::pay`].
    pub async fn pay_recarga(&self, recarga_id: Uuid) -> Result<(), ServerError> {
        let r = self
            .state
            .store
            .recarga_by_id(recarga_id)
            .await?
            .ok_or_else(|| ServerError::NotFound(format!("recarga {recarga_id}")))?;
        self.pay(&r.payment_id).await
    }

    /// Runs one reconciliation pass now; returns how many top-ups it credited.
    ///
    /// # Errors
    /// [`ServerError::Store`].
    pub async fn reconcile_now(&self) -> Result<u32, ServerError> {
        Ok(crate::reconcile::run_once(&self.state.store, &self.state.pix).await?)
    }

    /// The ledger check of `conta_id`: balance, credits, debits and what the history and the
    /// top-ups say ([`Ledger::is_consistent`]).
    ///
    /// # Errors
    /// [`ServerError::NotFound`] for an unknown account; [`ServerError::Store`].
    pub async fn check_ledger(&self, conta_id: ContaId) -> Result<Ledger, ServerError> {
        self.state
            .store
            .ledger(conta_id)
            .await?
            .ok_or_else(|| ServerError::NotFound(format!("conta {conta_id}")))
    }

    /// Stops accepting connections, lets in-flight requests finish, stops the jobs.
    pub async fn shutdown(self) {
        self.cancel.cancel();
        let _ = self.server.await;
        let _ = self.reconciliation.await;
    }
}

/// The background jobs of a server, every `intervalo` until `cancelar` fires: its turn at
/// reconciliation ([`crate::reconcile::Reconciler`]), the journal of lost charge outcomes
/// ([`AppState::settle_journal`]), the retention of uncharged error rows
/// ([`crate::retencao::Job`], hourly) and forgetting the rate limiters' idle keys.
async fn jobs(st: AppState, interval: Duration, cancel: CancellationToken) {
    let reconciler =
        crate::reconcile::Reconciler::new(st.store.clone(), st.pix.clone(), st.clock.clone());
    let retencao = crate::retencao::Job::default();
    let mut tick = tokio::time::interval(interval.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            _ = tick.tick() => {
                reconciler.turn(interval).await;
                st.settle_journal().await;
                retencao.turn(&st).await;
                st.clear_idle_limits();
            }
        }
    }
}
