//! Shared state of the HTTP handlers and background jobs.

use std::sync::Arc;

use crate::cache::Caches;
use crate::clock::Clock;
use crate::config::Config;
use crate::pix::{PixProvider, RefusingPsp, SimulatedPsp};
use crate::rate_limit::AddressLimiter;
use crate::rate_limit::KeyRateLimit;
use crate::recibo::service::{self, ReciboService};
use crate::store::journal::{Journal, journal_path};
use crate::store::{Store, StoreError};

/// What every handler can reach: store, PSP, limiter, configuration, clock.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Storage.
    pub store: Arc<dyn Store>,
    /// The PIX provider used by `POST /v1/recarga` and reconciliation.
    pub pix: Arc<dyn PixProvider>,
    /// The simulated PSP (for `pay`), when it is the provider.
    pub psp: Option<Arc<SimulatedPsp>>,
    /// Per-key rate limiter (shared by the processes of a PostgreSQL database, see
    /// [`crate::rate_limit`]); `None` when disabled.
    pub limiter: Option<Arc<dyn KeyRateLimit>>,
    /// Per-address limiter of requests that fail authentication; `None` when disabled.
    pub ip_limiter: Option<Arc<AddressLimiter>>,
    /// Configuration.
    pub config: Arc<Config>,
    /// Clock.
    pub clock: Clock,
    /// Caches of key owners and CAR records.
    pub(crate) caches: Caches,
    /// The receipt service of `GET /v1/car/{codigoCar}/recibo` ([`Config::recibo`]).
    pub(crate) recibo_service: Arc<dyn ReciboService>,
    /// The journal of charges whose outcome could not be learned
    /// ([`crate::store::journal`]): beside the SQLite file, or [`Config::journal`].
    pub journal: Option<Arc<Journal>>,
    /// The webhook secret once resolved ([`AppState::webhook_secret_of`]).
    secret: Arc<tokio::sync::OnceCell<Arc<str>>>,
}

impl AppState {
    /// State over `store` with the system clock and the implementations `config` asks for:
    /// the simulated PSP (one that refuses new charges with [`Config::pix_failure`]) and the
    /// receipt service of [`Config::recibo`].
    pub fn new(store: Arc<dyn Store>, config: Config) -> Self {
        let psp = Arc::new(SimulatedPsp::new(
            store.clone(),
            &config.pix_location_base,
            &config.pix_nome,
            &config.pix_cidade,
        ));
        let pix: Arc<dyn PixProvider> = if config.pix_failure {
            Arc::new(RefusingPsp(psp.clone()))
        } else {
            psp.clone()
        };
        let limiter = config.rate_limit.map(|n| store.limiter(n));
        AppState {
            store,
            pix,
            psp: Some(psp),
            recibo_service: service::service(config.recibo),
            limiter,
            ip_limiter: config
                .edge
                .unauthenticated_per_second
                .map(|n| Arc::new(AddressLimiter::new(n))),
            journal: Some(Arc::new(Journal::at(journal_path(
                &config.database_url,
                config.journal.as_deref(),
            )))),
            config: Arc::new(config),
            clock: Clock::system(),
            caches: Caches::new(),
            secret: Arc::default(),
        }
    }

    /// Forgets the rate limiters' idle keys (per key and per address): the periodic trim of
    /// every server's job loop, so their memory follows the active clients only.
    pub fn clear_idle_limits(&self) {
        if let Some(l) = &self.limiter {
            l.clear();
        }
        if let Some(l) = &self.ip_limiter {
            l.clear();
        }
    }

    /// Settles the journal of charges whose outcome was lost
    /// ([`crate::store::journal::estornar_journaled`]): each charge that did commit is reversed
    /// once, each entry closed after the database committed. Run at start-up and on every turn
    /// of a server's job loop; while the database is away it logs and leaves the rest for the
    /// next turn. Returns what the pass did (nothing without a journal or on failure).
    pub async fn settle_journal(&self) -> crate::store::journal::JournalPass {
        let Some(j) = &self.journal else {
            return crate::store::journal::JournalPass::default();
        };
        match crate::store::journal::estornar_journaled(self.store.as_ref(), j).await {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(erro = %e, diario = %j.path().display(),
                    "diário de cobranças: banco ainda indisponível; nova tentativa na próxima volta");
                crate::store::journal::JournalPass::default()
            }
        }
    }

    /// The HMAC secret of `POST /webhooks/pix`: the configured one
    /// ([`Config::webhook_secret`], when not blank), else the database's own
    /// ([`crate::pix::webhook::database_secret`], generated on first use). Read once, then kept.
    ///
    /// # Errors
    /// [`StoreError`] when the stored secret cannot be read or created.
    pub async fn webhook_secret(&self) -> Result<Arc<str>, StoreError> {
        self.secret
            .get_or_try_init(|| async {
                let configured = self.config.webhook_secret.as_deref();
                Ok::<_, StoreError>(match configured.filter(|s| !s.trim().is_empty()) {
                    Some(s) => Arc::from(s),
                    None => {
                        Arc::from(crate::pix::webhook::database_secret(self.store.as_ref()).await?)
                    }
                })
            })
            .await
            .cloned()
    }

    /// Writes `imoveis` to the store (inserted, or replaced by CAR code) and forgets their cached
    /// copies, so the next lookup of each answers the new data at once (a test double changing
    /// a record's owners or area). Returns how many were written.
    ///
    /// # Errors
    /// [`StoreError`] when the store cannot write them.
    pub async fn replace_imoveis(
        &self,
        imoveis: &[crate::dados::Imovel],
    ) -> Result<u64, StoreError> {
        let n = crate::store::ImoveisStore::write_imoveis(self.store.as_ref(), imoveis).await?;
        for i in imoveis {
            self.caches.forget_imovel(&i.codigo_car);
        }
        Ok(n)
    }

    /// The same state with another clock.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The same state with another PIX provider.
    pub fn with_pix(mut self, pix: Arc<dyn PixProvider>) -> Self {
        self.pix = pix;
        self
    }
}
