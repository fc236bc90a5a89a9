//! The [`Client`]: configuration, the request pipeline, and one file per group of operations.
//!
//! Every request goes through one pipeline ([`Client::execute`]): spend-guard reservation (for
//! charged lookups), the rate limiter, the HTTP call with its time-out, the retry policy, error
//! decoding and a `tracing` span.

mod builder;
mod car;
mod conta;
mod falta;
mod http;
mod incertos;
mod proprietario;
mod recarga;
mod recibo;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use url::Url;

pub use builder::{
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RECIBO_TIMEOUT, DEFAULT_TIMEOUT, ENV_API_KEY,
    ENV_BASE_URL, MIN_POLL_INTERVAL,
};
pub use falta::Falta;
pub use incertos::Resolucao;
pub use recibo::{ProgressoRecibo, ReciboDownload, ReciboInfo};

use crate::limiter::Limiter;
use crate::retry::{RetryBudget, RetryPolicy};
use crate::spend::{Reserva, SpendGuard};
use crate::{EndpointConsulta, Error, Gasto, Precos, Result};

/// Async client of the carapi `/v1` API: one method per operation of the contract.
///
/// Cheap to clone (an `Arc` inside) and `Send + Sync`: clones share the connection pool, the
/// rate limiter, the retry budget and the spend guard. Build it with [`Client::builder`] or
/// [`Client::from_env`].
///
/// | Method | Endpoint | Charged (BRL, current table) |
/// |---|---|---|
/// | [`car`](Client::car) | `GET /v1/car/{codigoCar}` | 1.00 |
/// | [`car_completo`](Client::car_completo) | `GET /v1/car/{codigoCar}/completo` | 2.30 |
/// | [`recibo`](Client::recibo), [`recibo_download`](Client::recibo_download), [`recibo_para_arquivo`](Client::recibo_para_arquivo) | `GET /v1/car/{codigoCar}/recibo` | 11.00 |
/// | [`proprietario`](Client::proprietario) | `GET /v1/proprietario/{cpfCnpj}` | 2.60 |
/// | [`saldo`](Client::saldo) | `GET /v1/saldo` | free |
/// | [`historico`](Client::historico), [`historico_stream`](Client::historico_stream) | `GET /v1/historico` | free |
/// | [`limites`](Client::limites) / [`atualizar_limites`](Client::atualizar_limites) | `GET`/`PUT /v1/limites` | free |
/// | [`uso`](Client::uso) | `GET /v1/uso` | free |
/// | [`faixas_recarga`](Client::faixas_recarga) | `GET /v1/recarga/faixas` | free |
/// | [`criar_recarga`](Client::criar_recarga) | `POST /v1/recarga` | free (creates a PIX charge) |
/// | [`recarga`](Client::recarga), [`aguardar_recarga`](Client::aguardar_recarga) | `GET /v1/recarga/{recargaId}` | free |
/// | [`recargas`](Client::recargas), [`recargas_stream`](Client::recargas_stream) | `GET /v1/recargas` | free |
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// Per-call time-out override ([`Client::com_timeout`]).
    timeout: Option<Duration>,
}

struct Inner {
    http: reqwest::Client,
    /// `Bearer <key>`, marked sensitive; sent on every request.
    auth: reqwest::header::HeaderValue,
    user_agent: reqwest::header::HeaderValue,
    base: Url,
    timeout: Duration,
    recibo_timeout: Duration,
    retry: RetryPolicy,
    budget: RetryBudget,
    limiter: Option<Limiter>,
    spend: SpendGuard,
    retry_charged_lookups: bool,
    poll_interval: Duration,
    precos_fixos: Option<Precos>,
    precos_cache: tokio::sync::Mutex<Option<Precos>>,
}

impl Client {
    /// A builder with the defaults (see [`ClientBuilder`]).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment: `CARAPI_BASE_URL` (e.g.
    /// `http://127.0.0.1:8080`) and `CARAPI_API_KEY`, all other settings at their defaults.
    ///
    /// # Errors
    /// [`Error::Config`] when a variable is missing or the URL is invalid.
    pub fn from_env() -> Result<Client> {
        ClientBuilder::default().build()
    }

    /// The base address requests go to (without `/v1`).
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// What this client (and its clones) spent on lookups, BRL: `confirmado` (priced HTTP 200s
    /// of `car`, `car_completo`, `proprietario` and the receipt, at the account's prices,
    /// contract "Prices"), `incerto` (answers lost after the request was sent: possibly charged)
    /// and `nao_precificadas` (lookups not yet priced). Sandbox values and errors cost nothing.
    /// [`ClientBuilder::max_spend`] compares `confirmado + incerto` against the cap.
    ///
    /// Prices are those given with [`ClientBuilder::precos`], or learned from `precos` of
    /// `GET /v1/saldo` whenever the client reads it ([`Client::saldo`], [`Client::precos`]).
    /// With a cap they are fetched before the first charged lookup; without one, no request is
    /// sent just for them, and the lookups made before are priced as soon as the client
    /// learns them (call [`Client::precos`] to have them priced now).
    ///
    /// [`Client::resolver_incertos`] settles the uncertain lookups against the free history.
    pub fn gasto(&self) -> Gasto {
        self.inner.spend.gasto()
    }

    /// A handle on the same client (same pool, limiter, retry budget and spend) whose calls
    /// use `timeout` per attempt instead of the builder's (the receipt's included).
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) -> carapi_sdk::Result<()> {
    /// use std::time::Duration;
    /// let car = client.com_timeout(Duration::from_secs(5)).car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47").await?;
    /// # Ok(()) }
    /// ```
    pub fn com_timeout(&self, timeout: Duration) -> Client {
        Client {
            inner: self.inner.clone(),
            timeout: Some(timeout),
        }
    }

    /// The spend cap set with [`ClientBuilder::max_spend`], BRL.
    pub fn max_spend(&self) -> Option<Decimal> {
        self.inner.spend.limite()
    }

    /// The account's effective prices as this client uses them for [`Client::gasto`] and the
    /// spend guard: those given to [`ClientBuilder::precos`], or `precos` of `GET /v1/saldo`,
    /// fetched when not yet known and cached (refreshed by every [`Client::saldo`], and
    /// forgotten when [`Client::recarga`] sees a confirmed top-up, which moves a legacy account
    /// to the current table).
    ///
    /// # Errors
    /// Those of [`Client::saldo`].
    pub async fn precos(&self) -> Result<Precos> {
        if let Some(p) = self.inner.precos_fixos {
            return Ok(p);
        }
        let mut cache = self.inner.precos_cache.lock().await;
        if let Some(p) = *cache {
            return Ok(p);
        }
        let p = self.fetch_saldo().await?.precos;
        *cache = Some(p);
        self.inner.spend.precificar(&p);
        Ok(p)
    }

    /// Forgets the cached prices (after a confirmed top-up).
    pub(crate) async fn esquecer_precos(&self) {
        *self.inner.precos_cache.lock().await = None;
    }

    /// Reserves the price of a charged lookup (nothing for sandbox values). With a cap the
    /// prices are fetched first if unknown (the cap needs them); without one, no request is
    /// sent just for prices: the lookup is counted and priced when the client learns them.
    pub(crate) async fn reservar(&self, op: Op, sandbox: bool, chave: &str) -> Result<Reserva> {
        if sandbox || !op.is_charged() {
            return Ok(Reserva::nenhuma());
        }
        let precos = match self.precos_conhecidos().await {
            Some(p) => p,
            None if self.inner.spend.limite().is_some() => self.precos().await?,
            None => return Ok(self.inner.spend.pendente(op, chave)),
        };
        self.inner.spend.reserve(op, chave, op.preco(&precos)).await
    }

    /// The prices given to the builder or already learned, without any request.
    pub(crate) async fn precos_conhecidos(&self) -> Option<Precos> {
        match self.inner.precos_fixos {
            Some(p) => Some(p),
            None => *self.inner.precos_cache.lock().await,
        }
    }

    /// Keeps the account's prices from an answer that carries them (`saldo`), unless fixed by
    /// the builder, and prices the lookups answered before they were known.
    pub(crate) async fn aprender_precos(&self, precos: Precos) {
        let precos = match self.inner.precos_fixos {
            Some(fixos) => fixos,
            None => {
                *self.inner.precos_cache.lock().await = Some(precos);
                precos
            }
        };
        self.inner.spend.precificar(&precos);
    }

    /// `{base}/v1/{segments…}`, each segment percent-encoded.
    pub(crate) fn url(&self, segments: &[&str]) -> Result<Url> {
        let mut url = self.inner.base.clone();
        url.path_segments_mut()
            .map_err(|()| Error::Config(format!("URL base sem caminho: {}", self.inner.base)))?
            .pop_if_empty()
            .push("v1")
            .extend(segments);
        Ok(url)
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("Client")
            .field("base_url", &i.base.as_str())
            .field("api_key", &"<redacted>")
            .field("timeout", &self.timeout.unwrap_or(i.timeout))
            .field("recibo_timeout", &i.recibo_timeout)
            .field("retry", &i.retry)
            .field("rate_limit", &i.limiter)
            .field("max_spend", &i.spend.limite())
            .field("gasto", &i.spend.gasto())
            .field("retry_charged_lookups", &i.retry_charged_lookups)
            .field("poll_interval", &i.poll_interval)
            .finish_non_exhaustive()
    }
}

/// The operations of the contract, for pricing, retry safety and tracing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Car,
    CarCompleto,
    Proprietario,
    Recibo,
    Saldo,
    Historico,
    Limites,
    AtualizarLimites,
    Uso,
    FaixasRecarga,
    CriarRecarga,
    Recarga,
    Recargas,
}

impl Op {
    /// The SDK method name, used in spans and errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Car => "car",
            Op::CarCompleto => "car_completo",
            Op::Proprietario => "proprietario",
            Op::Recibo => "recibo",
            Op::Saldo => "saldo",
            Op::Historico => "historico",
            Op::Limites => "limites",
            Op::AtualizarLimites => "atualizar_limites",
            Op::Uso => "uso",
            Op::FaixasRecarga => "faixas_recarga",
            Op::CriarRecarga => "criar_recarga",
            Op::Recarga => "recarga",
            Op::Recargas => "recargas",
        }
    }

    /// The route template of the contract (contract, "Endpoints"), for logs: never the key.
    pub(crate) fn route(self) -> &'static str {
        match self {
            Op::Car => "/v1/car/{codigoCar}",
            Op::CarCompleto => "/v1/car/{codigoCar}/completo",
            Op::Proprietario => "/v1/proprietario/{cpfCnpj}",
            Op::Recibo => "/v1/car/{codigoCar}/recibo",
            Op::Saldo => "/v1/saldo",
            Op::Historico => "/v1/historico",
            Op::Limites | Op::AtualizarLimites => "/v1/limites",
            Op::Uso => "/v1/uso",
            Op::FaixasRecarga => "/v1/recarga/faixas",
            Op::CriarRecarga => "/v1/recarga",
            Op::Recarga => "/v1/recarga/{recargaId}",
            Op::Recargas => "/v1/recargas",
        }
    }

    /// The registered form the history uses for a charged lookup.
    pub(crate) fn endpoint_consulta(self) -> Option<EndpointConsulta> {
        match self {
            Op::Car => Some(EndpointConsulta::CarBasico),
            Op::CarCompleto => Some(EndpointConsulta::CarCompleto),
            Op::Proprietario => Some(EndpointConsulta::Proprietario),
            Op::Recibo => Some(EndpointConsulta::Recibo),
            _ => None,
        }
    }

    /// The charged lookup named `name` (see [`Op::name`]).
    pub(crate) fn charged_by_name(name: &str) -> Option<Op> {
        [Op::Car, Op::CarCompleto, Op::Proprietario, Op::Recibo]
            .into_iter()
            .find(|op| op.name() == name)
    }

    /// The four lookups charged on HTTP 200 (contract, "Prices").
    pub(crate) fn is_charged(self) -> bool {
        matches!(
            self,
            Op::Car | Op::CarCompleto | Op::Proprietario | Op::Recibo
        )
    }

    /// The price of a charged lookup (zero for free operations).
    pub(crate) fn preco(self, p: &Precos) -> Decimal {
        match self {
            Op::Car => p.car_basico,
            Op::CarCompleto => p.car_completo,
            Op::Proprietario => p.proprietario,
            Op::Recibo => p.recibo,
            _ => Decimal::ZERO,
        }
    }
}
