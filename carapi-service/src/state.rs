//! Shared state of the HTTP handlers and background jobs.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::cache::Caches;
use crate::config::Config;
use crate::limite_chave::LimitePorChave;
use crate::limits::LimitadorIp;
use crate::pix::{PixProvider, PspRecusando, PspSimulado};
use crate::recibo::servico::{self, ServicoRecibo};
use crate::store::{Store, StoreError};

/// Source of the current instant (a fixed or movable one in tests).
#[derive(Clone)]
pub struct Relogio(Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl Relogio {
    /// The system clock.
    pub fn sistema() -> Self {
        Relogio(Arc::new(Utc::now))
    }

    /// A clock driven by `f`.
    pub fn de(f: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        Relogio(Arc::new(f))
    }

    /// The current instant.
    pub fn agora(&self) -> DateTime<Utc> {
        (self.0)()
    }
}

impl fmt::Debug for Relogio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Relogio")
    }
}

/// What every handler can reach: store, PSP, limiter, configuration, clock.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Storage.
    pub store: Arc<dyn Store>,
    /// The PIX provider used by `POST /v1/recarga` and reconciliation.
    pub pix: Arc<dyn PixProvider>,
    /// The simulated PSP (for `pagar`), when it is the provider.
    pub psp: Option<Arc<PspSimulado>>,
    /// Per-key rate limiter (shared by the processes of a PostgreSQL database, see
    /// [`crate::limite_chave`]); `None` when disabled.
    pub limitador: Option<Arc<dyn LimitePorChave>>,
    /// Per-address limiter of requests that fail authentication; `None` when disabled.
    pub limitador_ip: Option<Arc<LimitadorIp>>,
    /// Configuration.
    pub config: Arc<Config>,
    /// Clock.
    pub relogio: Relogio,
    /// Caches of key owners and CAR records.
    pub caches: Caches,
    /// The receipt service of `GET /v1/car/{codigoCar}/recibo` ([`Config::recibo`]).
    pub recibos: Arc<dyn ServicoRecibo>,
    /// The webhook secret once resolved ([`AppState::segredo_webhook`]).
    segredo: Arc<tokio::sync::OnceCell<Arc<str>>>,
}

impl AppState {
    /// State over `store` with the system clock and the implementations `config` asks for:
    /// the simulated PSP (one that refuses new charges with [`Config::pix_falha`]) and the
    /// receipt service of [`Config::recibo`].
    pub fn new(store: Arc<dyn Store>, config: Config) -> Self {
        let psp = Arc::new(PspSimulado::new(
            store.clone(),
            &config.pix_location_base,
            &config.pix_nome,
            &config.pix_cidade,
        ));
        let pix: Arc<dyn PixProvider> = if config.pix_falha {
            Arc::new(PspRecusando(psp.clone()))
        } else {
            psp.clone()
        };
        let limitador = config.rate_limit.map(|n| store.limitador(n));
        AppState {
            store,
            pix,
            psp: Some(psp),
            recibos: servico::servico(config.recibo),
            limitador,
            limitador_ip: config
                .borda
                .nao_autenticados_por_segundo
                .map(|n| Arc::new(LimitadorIp::new(n))),
            config: Arc::new(config),
            relogio: Relogio::sistema(),
            caches: Caches::new(),
            segredo: Arc::default(),
        }
    }

    /// The HMAC secret of `POST /webhooks/pix`: the configured one
    /// ([`Config::webhook_secret`], when not blank), else the database's own
    /// ([`crate::webhook::segredo_do_banco`], generated on first use). Read once, then kept.
    ///
    /// # Errors
    /// [`StoreError`] when the stored secret cannot be read or created.
    pub async fn segredo_webhook(&self) -> Result<Arc<str>, StoreError> {
        self.segredo
            .get_or_try_init(|| async {
                let configurado = self.config.webhook_secret.as_deref();
                Ok::<_, StoreError>(match configurado.filter(|s| !s.trim().is_empty()) {
                    Some(s) => Arc::from(s),
                    None => Arc::from(crate::webhook::segredo_do_banco(self.store.as_ref()).await?),
                })
            })
            .await
            .cloned()
    }

    /// The same state with another clock.
    pub fn com_relogio(mut self, relogio: Relogio) -> Self {
        self.relogio = relogio;
        self
    }

    /// The same state with another PIX provider.
    pub fn com_pix(mut self, pix: Arc<dyn PixProvider>) -> Self {
        self.pix = pix;
        self
    }
}
