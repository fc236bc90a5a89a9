//! [`ClientBuilder`]: every setting of the client, with defaults.

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderValue;
use rust_decimal::Decimal;
use url::Url;

use super::{Client, Inner};
use crate::limiter::{DEFAULT_RATE_LIMIT, Limiter};

/// Requests in flight at once by default ([`ClientBuilder::max_in_flight`]).
pub const DEFAULT_MAX_IN_FLIGHT: NonZeroUsize = NonZeroUsize::new(32).expect("32 is not zero");
use crate::retry::RetryPolicy;
use crate::spend::{DEFAULT_SETTLE_GRACE, SpendGuard};
use crate::{Error, Precos, Result};

/// Environment variable read for the base URL when none is given.
pub const ENV_BASE_URL: &str = "CARAPI_BASE_URL";
/// Environment variable read for the API key when none is given.
pub const ENV_API_KEY: &str = "CARAPI_API_KEY";

/// Default request time-out: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connect time-out: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time-out of the receipt download (headers and whole body): 120 s.
pub const DEFAULT_RECEIPT_TIMEOUT: Duration = Duration::from_secs(120);
/// Shortest interval between two status reads of [`Client::wait_for_recarga`]: 5 s
/// (contract, "Top-up endpoints" rule 7: "poll at intervals of 5 seconds or more").
pub const MIN_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// Configures and builds a [`Client`]. Obtain it with [`Client::builder`].
///
/// | Setting | Default |
/// |---|---|
/// | [`base_url`](Self::base_url) | `$CARAPI_BASE_URL` (required) |
/// | [`api_key`](Self::api_key) | `$CARAPI_API_KEY` (required) |
/// | [`timeout`](Self::timeout) | 30 s per request |
/// | [`connect_timeout`](Self::connect_timeout) | 10 s |
/// | [`receipt_timeout`](Self::receipt_timeout) | 120 s (receipt PDF, whole body) |
/// | [`retry`](Self::retry) | [`RetryPolicy::default`] |
/// | [`retry_charged_consultas`](Self::retry_charged_consultas) | false |
/// | [`rate_limit`](Self::rate_limit) | 10 requests in any second (contract, "Limits"), a burst of 10 |
/// | [`max_in_flight`](Self::max_in_flight) | 32 requests (and connections) at once |
/// | [`max_spend`](Self::max_spend) | none |
/// | [`settle_grace`](Self::settle_grace) | 30 s |
/// | [`precos`](Self::precos) | learned from `GET /v1/saldo` (free), read once before the first charged lookup |
/// | [`poll_interval`](Self::poll_interval) | 5 s (minimum 5 s; [`poll_interval_unchecked`](Self::poll_interval_unchecked) for local servers) |
/// | [`user_agent`](Self::user_agent) | `carapi-sdk/<version>` |
/// | [`http_client`](Self::http_client) | a `reqwest::Client` built from the settings above |
///
/// `Debug` never shows the key.
#[derive(Clone)]
pub struct ClientBuilder {
    base_url: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    receipt_timeout: Duration,
    retry: RetryPolicy,
    retry_charged_consultas: bool,
    rate_limit: Option<NonZeroU32>,
    max_in_flight: NonZeroUsize,
    max_spend: Option<Decimal>,
    settle_grace: Duration,
    precos: Option<Precos>,
    poll_interval: Duration,
    user_agent: String,
    http_client: Option<reqwest::Client>,
    #[cfg(feature = "archive")]
    archive: Option<(crate::archive::Archive, crate::archive::ArchivePolicy)>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            receipt_timeout: DEFAULT_RECEIPT_TIMEOUT,
            retry: RetryPolicy::default(),
            retry_charged_consultas: false,
            rate_limit: Some(DEFAULT_RATE_LIMIT),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_spend: None,
            settle_grace: DEFAULT_SETTLE_GRACE,
            precos: None,
            poll_interval: MIN_POLL_INTERVAL,
            user_agent: concat!("carapi-sdk/", env!("CARGO_PKG_VERSION")).to_owned(),
            http_client: None,
            #[cfg(feature = "archive")]
            archive: None,
        }
    }
}

impl ClientBuilder {
    /// The service's base address, without `/v1` (e.g. `http://127.0.0.1:8080`; a path prefix
    /// such as `https://host/api` is kept). Default: `$CARAPI_BASE_URL`.
    #[must_use]
    pub fn base_url(mut self, url: impl AsRef<str>) -> Self {
        self.base_url = Some(url.as_ref().to_owned());
        self
    }

    /// The API key sent as `Authorization: Bearer <key>` on every request (contract,
    /// "Authentication"). Default: `$CARAPI_API_KEY`. Never logged nor shown by `Debug`. A
    /// blank key given here is an error of [`build`](Self::build) (it never falls back to the
    /// environment).
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Time-out of each attempt of a JSON request, from connecting to the end of the body
    /// (default 30 s).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Time-out of establishing a connection (default 10 s).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time-out of the receipt request, whole PDF body included (default 120 s).
    #[must_use]
    pub fn receipt_timeout(mut self, timeout: Duration) -> Self {
        self.receipt_timeout = timeout;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]; [`RetryPolicy::disabled`] turns
    /// retries off).
    #[must_use]
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Opt in to re-sending a charged lookup (`car`, `car_completo`, `proprietario`, receipt)
    /// whose answer was lost after the request was sent (time-out, connection reset). The first
    /// request may have been charged, so this can charge twice (and [`Client::gasto`] counts the
    /// lookup once); default false. A 200 whose body broke off is never re-sent: it was charged.
    #[must_use]
    pub fn retry_charged_consultas(mut self, yes: bool) -> Self {
        self.retry_charged_consultas = yes;
        self
    }

    /// Client-side rate limit in requests per second, every request and retry included;
    /// `None` turns it off. Default 10/s, the contract's limit per key (contract, "Limits").
    /// Up to `n` requests go at once (a burst), and no one-second window ever holds more than
    /// `n`: request `k + n` waits until one second after request `k` left. Clones of the client
    /// share the limit; separate clients on the same key do not.
    #[must_use]
    pub fn rate_limit(mut self, per_second: Option<NonZeroU32>) -> Self {
        self.rate_limit = per_second;
        self
    }

    /// The most requests this client and its clones have in flight at once, each on a
    /// connection of its own (default 32; the idle connections kept are bounded alike). More
    /// wait for a free one, before they are sent. A server bounds the connections of one
    /// address (the reference server resets those past 100): a burst of hundreds of lookups
    /// without a rate limit then waits here instead of meeting resets, whose lookups could not
    /// tell whether they were charged.
    #[must_use]
    pub fn max_in_flight(mut self, n: NonZeroUsize) -> Self {
        self.max_in_flight = n;
        self
    }

    /// Spend cap of this client and its clones, BRL. It counts [`Client::gasto`]'s
    /// `confirmado + incerto` (an answer lost after sending may have been charged) plus the
    /// prices reserved by lookups in flight. A lookup that fits once those in flight settle
    /// (a 404 releases its reservation) waits for them; one that would pass the cap even then
    /// is refused before it is sent with [`Error::SpendLimit`]. Sandbox values are free and
    /// always pass. The prices are read once (`GET /v1/saldo`) unless given with
    /// [`precos`](Self::precos); when that read fails, the lookup fails with its error.
    #[must_use]
    pub fn max_spend(mut self, max: Decimal) -> Self {
        self.max_spend = Some(max);
        self
    }

    /// How long after a lost answer (or a call dropped after sending) its request may still be
    /// in process at the server (default 30 s). Until then
    /// [`Client::settle_incertos`] leaves a lookup the history does not show uncertain
    /// ([`Settlement::pendentes`](crate::Settlement::pendentes)); after it, such a lookup is
    /// settled as not charged. Measured on this client's monotonic clock. A short grace suits a
    /// local test server whose requests end in milliseconds.
    #[must_use]
    pub fn settle_grace(mut self, grace: Duration) -> Self {
        self.settle_grace = grace;
        self
    }

    /// The account's prices, when known (e.g. [`Precos::ATUAIS`]); saves the free
    /// `GET /v1/saldo` the client otherwise makes before its first charged lookup to price
    /// [`Client::gasto`] and the cap.
    #[must_use]
    pub fn precos(mut self, precos: Precos) -> Self {
        self.precos = Some(precos);
        self
    }

    /// Interval between two status reads of [`Client::wait_for_recarga`]; values below
    /// [`MIN_POLL_INTERVAL`] (5 s, the contract's recommendation for the service) are raised
    /// to it. See [`poll_interval_unchecked`](Self::poll_interval_unchecked) for local servers.
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(MIN_POLL_INTERVAL);
        self
    }

    /// Interval between two status reads of [`Client::wait_for_recarga`], taken as given, even
    /// below the 5 s the contract recommends for the real service (contract, "Limits",
    /// "Status polling"): for a local reference server or a test server you run yourself.
    #[must_use]
    pub fn poll_interval_unchecked(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Brings your own HTTP client (proxies, custom root certificates, HTTP/2 settings, …).
    /// The SDK still sends its `Authorization` and `User-Agent` headers and its time-outs per
    /// request; [`connect_timeout`](Self::connect_timeout) is then the given client's own
    /// setting. The client may be shared with other code (reqwest clients are cheap to clone).
    ///
    /// ```no_run
    /// let http = reqwest::Client::builder()
    ///     .proxy(reqwest::Proxy::https("http://proxy.interno:3128")?)
    ///     .build()?;
    /// let client = carapi_sdk::Client::builder().http_client(http).build();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// The `User-Agent` header (default `carapi-sdk/<version>`).
    #[must_use]
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// True when the HTTP client was given ([`ClientBuilder::http_client`]).
    #[cfg(feature = "blocking")]
    pub(crate) fn has_http_client(&self) -> bool {
        self.http_client.is_some()
    }

    /// Keeps every charged 200 in `archive` under `policy` (cargo feature `archive`): the
    /// lookups ([`Client::car`], [`Client::car_completo`], [`Client::proprietario`],
    /// [`Client::recibo`], [`Client::recibo_download`], [`Client::recibo_to_file`]) answer from
    /// it while fresh and append what they buy; each [`Answer`](crate::Answer) says where it
    /// came from, and a bought one returns once it is committed (with its number, or a
    /// warning), unless [`Client::with_commit`] says otherwise. One purchase per key across the
    /// clients and processes on the archive. See [`crate::archive`].
    ///
    /// [`ClientBuilder::build`] fails with [`Error::Config`] when the policy's purpose is
    /// blank (before any request).
    #[cfg(feature = "archive")]
    #[cfg_attr(docsrs, doc(cfg(feature = "archive")))]
    #[must_use]
    pub fn archive(
        mut self,
        archive: crate::archive::Archive,
        policy: crate::archive::ArchivePolicy,
    ) -> Self {
        self.archive = Some((archive, policy));
        self
    }

    /// Builds the client, reading `CARAPI_BASE_URL` / `CARAPI_API_KEY` for what was not given.
    ///
    /// # Errors
    /// [`Error::Config`] when the base URL or key is missing or given blank, the URL is not
    /// `http(s)`, or the key holds characters not allowed in a header.
    pub fn build(self) -> Result<Client> {
        self.build_with_env(|name| std::env::var(name).ok())
    }

    pub(crate) fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<Client> {
        let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let given = |s: &Option<String>, what: &str| match s {
            Some(v) if v.trim().is_empty() => Err(Error::Config(format!("{what} em branco"))),
            _ => Ok(non_empty(s.clone())),
        };
        let base = given(&self.base_url, "URL base")?
            .or_else(|| non_empty(env(ENV_BASE_URL)))
            .ok_or_else(|| {
                Error::Config(format!(
                    "URL base não definida: use ClientBuilder::base_url ou {ENV_BASE_URL}"
                ))
            })?;
        let key = given(&self.api_key, "chave de API")?
            .or_else(|| non_empty(env(ENV_API_KEY)))
            .ok_or_else(|| {
                Error::Config(format!(
                    "chave de API não definida: use ClientBuilder::api_key ou {ENV_API_KEY}"
                ))
            })?;
        let base = Url::parse(base.trim())
            .map_err(|e| Error::Config(format!("URL base inválida {base:?}: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(Error::Config(format!(
                "URL base deve ser http(s)://…: {base}"
            )));
        }
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
            .map_err(|_| Error::Config("chave de API com caracteres inválidos".into()))?;
        auth.set_sensitive(true);
        let user_agent = HeaderValue::from_str(&self.user_agent)
            .map_err(|_| Error::Config("User-Agent com caracteres inválidos".into()))?;
        let http = match self.http_client.clone() {
            Some(http) => http,
            None => reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .pool_max_idle_per_host(self.max_in_flight.get())
                .build()
                .map_err(|e| Error::Config(format!("cliente HTTP: {e}")))?,
        };
        let spend = SpendGuard::new(self.max_spend, self.settle_grace);
        if let Some(p) = self.precos {
            spend.learn_prices(p);
        }
        Ok(Client {
            call: super::CallOptions::default(),
            inner: Arc::new(Inner {
                http,
                auth,
                user_agent,
                base,
                timeout: self.timeout,
                receipt_timeout: self.receipt_timeout,
                budget: self.retry.new_budget(),
                retry: self.retry,
                limiter: self.rate_limit.map(Limiter::new),
                in_flight: Arc::new(tokio::sync::Semaphore::new(self.max_in_flight.get())),
                spend,
                retry_charged_consultas: self.retry_charged_consultas,
                poll_interval: self.poll_interval,
                fixed_precos: self.precos,
                precos_read: tokio::sync::Mutex::new(()),
                #[cfg(feature = "archive")]
                archive: self
                    .archive
                    .map(|(a, p)| super::archived::ArchiveSetup::new(a, p, &key))
                    .transpose()?,
                tasks: tokio_util::task::TaskTracker::new(),
            }),
        })
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("receipt_timeout", &self.receipt_timeout)
            .field("retry", &self.retry)
            .field("retry_charged_consultas", &self.retry_charged_consultas)
            .field("rate_limit", &self.rate_limit)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_spend", &self.max_spend)
            .field("settle_grace", &self.settle_grace)
            .field("precos", &self.precos)
            .field("poll_interval", &self.poll_interval)
            .field("user_agent", &self.user_agent)
            .field("http_client", &self.http_client.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn reads_the_environment_when_not_given() {
        let c = ClientBuilder::default()
            .build_with_env(env(&[
                (ENV_BASE_URL, "http://127.0.0.1:9/"),
                (ENV_API_KEY, "segredo-123"),
            ]))
            .unwrap();
        assert_eq!(c.base_url().as_str(), "http://127.0.0.1:9/");
        assert!(!format!("{c:?}").contains("segredo-123"));
        let explicit = ClientBuilder::default()
            .base_url("https://api.example.com/prefixo")
            .api_key("k")
            .build_with_env(env(&[(ENV_BASE_URL, "http://ignored")]))
            .unwrap();
        assert_eq!(
            explicit.url(&["car", "a b"]).unwrap().as_str(),
            "https://api.example.com/prefixo/v1/car/a%20b"
        );
    }

    #[test]
    fn missing_or_bad_settings_are_config_errors() {
        let none = env(&[]);
        let e = ClientBuilder::default()
            .api_key("k")
            .build_with_env(&none)
            .unwrap_err();
        assert!(matches!(e, Error::Config(m) if m.contains(ENV_BASE_URL)));
        let e = ClientBuilder::default()
            .base_url("http://h")
            .build_with_env(&none)
            .unwrap_err();
        assert!(matches!(e, Error::Config(m) if m.contains(ENV_API_KEY)));
        assert!(
            ClientBuilder::default()
                .base_url("ftp://h")
                .api_key("k")
                .build_with_env(&none)
                .is_err()
        );
        assert!(
            ClientBuilder::default()
                .base_url("não é url")
                .api_key("k")
                .build_with_env(&none)
                .is_err()
        );
        assert!(
            ClientBuilder::default()
                .base_url("http://h")
                .api_key("a\nb")
                .build_with_env(&none)
                .is_err()
        );
    }

    #[test]
    fn a_blank_key_given_is_an_error_not_the_environments_key() {
        let env_key = env(&[(ENV_API_KEY, "chave-do-ambiente")]);
        for blank in ["", " ", "\t\n"] {
            let e = ClientBuilder::default()
                .base_url("http://h")
                .api_key(blank)
                .build_with_env(&env_key)
                .unwrap_err();
            assert!(
                matches!(&e, Error::Config(m) if m.contains("em branco")),
                "{e:?}"
            );
        }
        assert!(
            ClientBuilder::default()
                .base_url("http://h")
                .build_with_env(&env_key)
                .is_ok(),
            "not given: the environment's"
        );
    }

    #[test]
    fn debug_hides_the_key_and_poll_interval_has_a_floor() {
        let b = ClientBuilder::default()
            .api_key("super-secreta")
            .poll_interval(Duration::from_millis(1));
        let s = format!("{b:?}");
        assert!(!s.contains("super-secreta"));
        assert!(s.contains("<redacted>"));
        assert_eq!(b.poll_interval, MIN_POLL_INTERVAL);
        let b = b.poll_interval_unchecked(Duration::from_millis(50));
        assert_eq!(
            b.poll_interval,
            Duration::from_millis(50),
            "opt-in shorter interval"
        );
    }
}
