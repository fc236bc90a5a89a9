//! The [`Client`]: configuration, the request pipeline, and one file per group of operations.
//!
//! Every request goes through one pipeline ([`Client::execute`]): spend-guard reservation (for
//! charged lookups), the rate limiter, the HTTP call with its time-out, the retry policy, error
//! decoding and a `tracing` span.

#[cfg(feature = "archive")]
mod archived;
mod builder;
mod car;
mod conta;
mod falta;
mod http;
mod incertos;
mod options;
mod proprietario;
mod purchase;
mod recarga;
mod recibo;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use url::Url;

pub use builder::{
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_IN_FLIGHT, DEFAULT_RECEIPT_TIMEOUT,
    DEFAULT_TIMEOUT, ENV_API_KEY, ENV_BASE_URL, MIN_POLL_INTERVAL,
};
pub use falta::Falta;
pub use incertos::Settlement;
pub use recibo::{ReciboDownload, ReciboInfo, ReciboProgress};

use crate::limiter::Limiter;
pub(crate) use crate::op::Op;
use crate::retry::{RetryBudget, RetryPolicy};
use crate::spend::{Reservation, SpendGuard};
use crate::{Error, Gasto, Precos, Result};
pub(crate) use options::CallOptions;

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
/// | [`recibo`](Client::recibo), [`recibo_download`](Client::recibo_download), [`recibo_to_file`](Client::recibo_to_file) | `GET /v1/car/{codigoCar}/recibo` | 11.00 |
/// | [`proprietario`](Client::proprietario) | `GET /v1/proprietario/{cpfCnpj}` | 2.60 |
/// | [`saldo`](Client::saldo) | `GET /v1/saldo` | free |
/// | [`historico`](Client::historico), [`historico_stream`](Client::historico_stream) | `GET /v1/historico` | free |
/// | [`limites`](Client::limites) / [`atualizar_limites`](Client::atualizar_limites) | `GET`/`PUT /v1/limites` | free |
/// | [`uso`](Client::uso) | `GET /v1/uso` | free |
/// | [`faixas_recarga`](Client::faixas_recarga) | `GET /v1/recarga/faixas` | free |
/// | [`criar_recarga`](Client::criar_recarga) | `POST /v1/recarga` | free (creates a PIX charge) |
/// | [`recarga`](Client::recarga), [`wait_for_recarga`](Client::wait_for_recarga) | `GET /v1/recarga/{recargaId}` | free |
/// | [`recargas`](Client::recargas), [`recargas_stream`](Client::recargas_stream) | `GET /v1/recargas` | free |
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// This handle's settings of its calls ([`Client::with_timeout`] and the other `with_*`).
    call: CallOptions,
}

struct Inner {
    http: reqwest::Client,
    /// `Bearer <key>`, marked sensitive; sent on every request.
    auth: reqwest::header::HeaderValue,
    user_agent: reqwest::header::HeaderValue,
    base: Url,
    timeout: Duration,
    receipt_timeout: Duration,
    retry: RetryPolicy,
    budget: RetryBudget,
    limiter: Option<Arc<Limiter>>,
    /// One permit per request in flight ([`ClientBuilder::max_in_flight`]).
    in_flight: Arc<tokio::sync::Semaphore>,
    spend: SpendGuard,
    retry_charged_consultas: bool,
    poll_interval: Duration,
    fixed_precos: Option<Precos>,
    /// Held while the prices are read, so that concurrent lookups share one read (the prices
    /// themselves live in the spend guard).
    precos_read: tokio::sync::Mutex<()>,
    /// The archive of paid answers and its policy (cargo feature `archive`).
    #[cfg(feature = "archive")]
    archive: Option<archived::ArchiveSetup>,
    /// The purchases sent and not yet ended (their answer, its append): [`Client::close`]
    /// waits for them.
    tasks: tokio_util::task::TaskTracker,
}

impl Client {
    /// A builder with the defaults (see [`ClientBuilder`]).
    #[must_use]
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
    #[must_use]
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// What this client (and its clones) spent on lookups, BRL: `confirmado` (priced HTTP 200s
    /// of `car`, `car_completo`, `proprietario` and the receipt, at the account's prices,
    /// contract "Prices"), `incerto` (lookups whose request may have reached the server and whose
    /// answer never came back, lost or because the call's future was dropped: possibly charged)
    /// and `nao_precificadas` (lookups not yet priced). Sandbox values and errors cost nothing.
    /// [`ClientBuilder::max_spend`] compares `confirmado + incerto` against the cap.
    ///
    /// Prices are those given with [`ClientBuilder::precos`], or `precos` of `GET /v1/saldo`
    /// (free), which the client reads once, alongside its first charged lookup (before it when
    /// there is a cap), when it has not read them yet ([`Client::saldo`] and [`Client::precos`]
    /// refresh them); the lookup returns once both ended. So after any charged call
    /// `confirmado` is exact, with or without a cap; `nao_precificadas` counts only the lookups
    /// made while the prices could not be read (the saldo request itself failed), priced as
    /// soon as the client learns them.
    ///
    /// [`Client::settle_incertos`] settles the uncertain lookups against the free history.
    #[must_use]
    pub fn gasto(&self) -> Gasto {
        self.inner.spend.gasto()
    }

    /// A handle on the same client (same pool, limiter, retry budget and spend) whose calls
    /// use `timeout` per attempt instead of the builder's (the receipt's included).
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) -> carapi_sdk::Result<()> {
    /// use std::time::Duration;
    /// let car = client.with_timeout(Duration::from_secs(5)).car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47").await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_timeout(&self, timeout: Duration) -> Client {
        let mut c = self.clone();
        c.call.timeout = Some(timeout);
        c
    }

    /// A handle on the same client with `call`'s settings (the blocking client's handles).
    #[cfg(feature = "blocking")]
    pub(crate) fn with_call(&self, call: CallOptions) -> Client {
        Client {
            inner: self.inner.clone(),
            call,
        }
    }

    /// The spend cap set with [`ClientBuilder::max_spend`], BRL.
    #[must_use]
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
        if let Some(p) = self.known_precos() {
            return Ok(p);
        }
        let _one_read = self.inner.precos_read.lock().await;
        if let Some(p) = self.known_precos() {
            return Ok(p);
        }
        let p = self.fetch_saldo().await?.precos;
        self.inner.spend.learn_prices(p);
        Ok(p)
    }

    /// Forgets the learned prices (after a confirmed top-up); the builder's stay.
    pub(crate) fn forget_prices(&self) {
        if self.inner.fixed_precos.is_none() {
            self.inner.spend.forget_prices();
        }
    }

    /// Reserves the price of a charged lookup (nothing for sandbox values and free operations);
    /// the `bool` tells the caller to read the account's prices alongside the lookup.
    ///
    /// With the prices known (given to the builder or learned), the lookup is reserved at its
    /// price. With a cap and unknown prices, they are read first (one free `GET /v1/saldo`,
    /// shared by concurrent lookups): the cap needs them, and when they cannot be read the
    /// lookup fails with that error. Without a cap the lookup does not wait for them: it goes
    /// out at once, counted without a price, and priced as soon as the read alongside it
    /// answers ([`Gasto::nao_precificadas`] only while they cannot be read).
    pub(crate) async fn reserve_consulta(
        &self,
        op: Op,
        sandbox: bool,
        chave: &str,
    ) -> Result<(Reservation, bool)> {
        if sandbox || !op.is_charged() {
            return Ok((Reservation::free(), false));
        }
        let precos = match self.known_precos() {
            Some(p) => p,
            None if self.inner.spend.limite().is_some() => self.precos().await?,
            None => return Ok((self.inner.spend.unpriced(op, chave), true)),
        };
        Ok((
            self.inner
                .spend
                .reserve(op, chave, op.preco(&precos))
                .await?,
            false,
        ))
    }

    /// The prices given to the builder or already learned, without any request.
    pub(crate) fn known_precos(&self) -> Option<Precos> {
        self.inner
            .fixed_precos
            .or_else(|| self.inner.spend.precos())
    }

    /// Keeps the account's prices from an answer that carries them (`saldo`), unless fixed by
    /// the builder, and prices the lookups answered before they were known.
    pub(crate) fn learn_precos(&self, precos: Precos) {
        self.inner
            .spend
            .learn_prices(self.inner.fixed_precos.unwrap_or(precos));
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
            .field("timeout", &self.call.timeout.unwrap_or(i.timeout))
            .field("receipt_timeout", &i.receipt_timeout)
            .field("retry", &i.retry)
            .field("rate_limit", &i.limiter)
            .field("max_spend", &i.spend.limite())
            .field("gasto", &i.spend.gasto())
            .field("retry_charged_consultas", &i.retry_charged_consultas)
            .field("poll_interval", &i.poll_interval)
            .finish_non_exhaustive()
    }
}
