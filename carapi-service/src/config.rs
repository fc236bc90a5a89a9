//! Server configuration: everything `spawn` needs, with defaults that run with no setup.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::Duration;

/// Default database URL of the command line.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://carapi.db";
/// Default bound of open connections per client address ([`Edge::connections_per_address`]).
pub const DEFAULT_CONNECTIONS_PER_ADDRESS: usize = 100;
/// Default bound of requests served on one connection ([`Edge::requests_per_connection`]).
pub const DEFAULT_REQUESTS_PER_CONNECTION: u32 = 100;
/// Default bound of a request's head, bytes ([`Edge::max_header_bytes`]): 1,000 connections
/// holding unfinished heads take at most 32 MB, and a real request's head (a CAR code, a key,
/// a `busca` of the 64 characters the history keeps) needs under 1 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 32 * 1024;
/// Default bound of connections per client address still sending their first request's head
/// ([`Edge::unfinished_per_address`]): 11 addresses sending headers slowly then hold at most
/// 220 of the 1,000 connections, and a browser or SDK opens a handful at once.
pub const DEFAULT_UNFINISHED_PER_ADDRESS: usize = 20;
/// Default bind address of `carapi-server serve`.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

/// The retention of uncharged error rows as the operator writes it (`--retencao-erros-dias`):
/// a number of days, at least [`crate::money::retencao::MIN_DAYS`], or `sempre` (keep them
/// forever: `None`).
///
/// # Errors
/// A Portuguese message for anything else, a number under the minimum included.
pub fn parse_error_retention(s: &str) -> Result<Option<u32>, String> {
    let minimo = crate::money::retencao::MIN_DAYS;
    let s = s.trim();
    if s.eq_ignore_ascii_case("sempre") {
        return Ok(None);
    }
    match s.parse::<u32>() {
        Ok(d) if d >= minimo => Ok(Some(d)),
        Ok(d) => Err(format!(
            "retenção de {d} dias é curta demais: o mínimo é {minimo} dias, pois GET /v1/uso e \
             usoHoje.erros leem os últimos 30 dias; use `sempre` para nunca remover"
        )),
        Err(_) => Err(format!(
            "retenção inválida: {s:?}; informe dias (ao menos {minimo}) ou `sempre`"
        )),
    }
}

/// How `GET /v1/car/{codigoCar}/recibo` behaves for real (non-sandbox) codes, so that the
/// contract's receipt errors are reachable (docs/contrato.md, receipt errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReciboMode {
    /// Receipts are rendered and served.
    #[default]
    Normal,
    /// The receipt service is down: 503 `SERVICO_INDISPONIVEL` before anything is read.
    Unavailable,
    /// Rendering fails after validation: 502 `RECIBO_INDISPONIVEL` (never charged).
    FailureStream,
}

impl std::str::FromStr for ReciboMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "normal" => Ok(Self::Normal),
            "indisponivel" => Ok(Self::Unavailable),
            "falha-stream" => Ok(Self::FailureStream),
            _ => Err(format!(
                "modo de recibo inválido: {s:?} (normal, indisponivel, falha-stream)"
            )),
        }
    }
}

/// Configuration of a server instance. Every field is public; [`Config::default`] gives the
/// `serve` defaults and [`Config::local`] an in-process server on a random port.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to bind (`127.0.0.1:0` picks a free port).
    pub bind: SocketAddr,
    /// Database URL; its scheme picks the store ([`crate::startup::open_store`]):
    /// `sqlite://carapi.db` (embedded SQLite, the default; created when missing;
    /// `sqlite::memory:` works for a single-process server) or `postgres://user@host:5432/db`
    /// / `postgresql://...` (PostgreSQL for scale; the database is created when missing and
    /// the user may create it).
    pub database_url: String,
    /// HMAC-SHA256 secret of `POST /webhooks/pix` (`CARAPI_WEBHOOK_SECRET`). `None` (the
    /// default) uses the database's own secret: 32 random bytes in hex, generated on first
    /// start and stored in the `configuracao` table ([`crate::pix::webhook::database_secret`];
    /// `carapi-server webhook-secret` prints it). No secret is built into the server.
    pub webhook_secret: Option<String>,
    /// Period of the reconciliation job for pending top-ups (contract: 2 minutes).
    pub reconcile_interval: Duration,
    /// Receipt behaviour (see [`ReciboMode`]).
    pub recibo: ReciboMode,
    /// When true the simulated PSP refuses to create charges: `POST /v1/recarga` answers
    /// 502 `ERRO_PIX`.
    pub pix_failure: bool,
    /// Load the bundled CAR records when the database has none.
    pub load_bundled_data: bool,
    /// Requests per second allowed per API key on every `/v1` route (contract: 10). `None`
    /// disables the limiter (load tests that must not be throttled).
    pub rate_limit: Option<NonZeroU32>,
    /// Host and path of the simulated PSP's charge locations inside the BR Code (field 26/25,
    /// no `https://`); the payment id is appended.
    pub pix_location_base: String,
    /// Merchant name in the BR Code (field 59).
    pub pix_nome: String,
    /// Merchant city in the BR Code (field 60).
    pub pix_cidade: String,
    /// Time-outs and bounds of the HTTP edge (see [`Edge`]).
    pub edge: Edge,
    /// The journal of charges whose outcome could not be learned (`--diario`); `None`: beside
    /// the SQLite file (`FILE.diario`), or `carapi.diario` in the working directory for
    /// PostgreSQL ([`crate::store::journal::journal_path`]).
    pub journal: Option<std::path::PathBuf>,
    /// Address of its own where `GET /metrics` is served (`--endereco-metricas`), so that it
    /// need not face the clients; the main address then answers 404 there. `None` (the
    /// default): `/metrics` on the main address.
    pub metrics_bind: Option<SocketAddr>,
    /// Days an uncharged error row stays in the history before the server deletes it
    /// (`--retencao-erros-dias`; rules in [`crate::money::retencao`]); `None` keeps them forever.
    /// At least [`crate::money::retencao::MIN_DAYS`] ([`parse_error_retention`]); default
    /// [`crate::money::retencao::DEFAULT_DAYS`].
    pub error_retention_days: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: DEFAULT_BIND.parse().expect("valid default bind address"),
            database_url: DEFAULT_DATABASE_URL.to_owned(),
            webhook_secret: None,
            reconcile_interval: Duration::from_secs(120),
            recibo: ReciboMode::Normal,
            pix_failure: false,
            load_bundled_data: true,
            rate_limit: NonZeroU32::new(10),
            pix_location_base: "CARAPI.EXAMPLE/PIX".to_owned(),
            pix_nome: "CARAPI".to_owned(),
            pix_cidade: "BRASILIA".to_owned(),
            edge: Edge::default(),
            journal: None,
            metrics_bind: None,
            error_retention_days: Some(crate::money::retencao::DEFAULT_DAYS),
        }
    }
}

impl Config {
    /// An in-process server on `127.0.0.1:0` over `database_url`, otherwise the defaults,
    /// except the per-address limit of failed authentications, which is off: every client of
    /// an in-process server shares the loopback address (tests that try bad keys on purpose
    /// would block the next test's good ones).
    pub fn local(database_url: impl Into<String>) -> Self {
        let edge = Edge {
            unauthenticated_per_second: None,
            ..Default::default()
        };
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            database_url: database_url.into(),
            edge,
            ..Config::default()
        }
    }
}

/// The knobs of the HTTP edge (`carapi-server serve --help` shows the defaults).
#[derive(Debug, Clone)]
pub struct Edge {
    /// Time a client has to send a request's headers; hyper starts it when it begins waiting
    /// for a request, so it is also how long an idle keep-alive connection stays open. A
    /// connection accepted while over half of [`Edge::max_connections`] are open gets a quarter
    /// of it, at least 1 s (the pressure of slow headers from many addresses).
    pub header_timeout: Duration,
    /// Time a client has to send a whole request body (408 after it).
    pub body_timeout: Duration,
    /// Largest request body, bytes (413 above it).
    pub max_body: usize,
    /// Open connections at most; above it the server stops accepting until one closes.
    pub max_connections: usize,
    /// Open connections per client address at most; past it that address's new connections
    /// are closed at once while other addresses are still served. `None` disables this bound.
    pub connections_per_address: Option<usize>,
    /// Requests per second per client address that fail authentication (401) before they
    /// are answered 429; `None` disables this limit.
    pub unauthenticated_per_second: Option<NonZeroU32>,
    /// Longest time the server waits for a peer to accept bytes of an answer: a connection
    /// whose peer reads nothing for this long is closed (a client that pipelines requests and
    /// never reads cannot hold its connection).
    pub send_timeout: Duration,
    /// Requests served on one connection at most: the answer to the last one says
    /// `Connection: close` and the connection closes after it (requests pipelined past it are
    /// not served).
    pub requests_per_connection: u32,
    /// Connections per client address whose first request's head has not fully arrived, at
    /// most, while over half of [`Edge::max_connections`] are open; past it that address's new
    /// connections are closed at once. A trusted proxy's
    /// address ([`Edge::trusted_proxies`]) is never counted. `None` disables this bound.
    pub unfinished_per_address: Option<usize>,
    /// Bytes of a request's head (request line and headers) a connection may buffer, at least
    /// 8 KiB (hyper's floor): a head that does not fit is answered 431 and its connection
    /// closed, so unfinished headers take at most this much memory per connection
    /// (`--cabecalho-maximo`).
    pub max_header_bytes: usize,
    /// Reverse proxies (address ranges) whose [`Edge::client_header`] names the client address
    /// (see the server README's "Security"); empty (the default): no header is read and the
    /// client is the socket's peer. A trusted proxy's socket address counts toward no
    /// per-address bound (connections included): the clients behind it are counted instead.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The one header a trusted proxy writes the client address into (default
    /// `X-Forwarded-For`; `Forwarded` reads RFC 7239's `for=`), read right to left past the
    /// trusted proxies. Every other such header is ignored, so a client-sent one chooses nothing.
    pub client_header: axum::http::HeaderName,
}

impl Default for Edge {
    /// 10 s for headers (and idle keep-alive), 10 s for a body (as short as the headers'), 64 KiB bodies, 1,000
    /// connections, 100 of them per client address, 20 failed authentications per second per
    /// address, 10 s for a peer to accept bytes of an answer, 100 requests per connection, no
    /// trusted proxy, `X-Forwarded-For`.
    fn default() -> Self {
        Edge {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            max_body: 64 * 1024,
            max_connections: 1_000,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            unfinished_per_address: Some(DEFAULT_UNFINISHED_PER_ADDRESS),
            connections_per_address: Some(DEFAULT_CONNECTIONS_PER_ADDRESS),
            unauthenticated_per_second: NonZeroU32::new(20),
            send_timeout: Duration::from_secs(10),
            requests_per_connection: DEFAULT_REQUESTS_PER_CONNECTION,
            trusted_proxies: Vec::new(),
            client_header: axum::http::HeaderName::from_static("x-forwarded-for"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_retention_is_days_from_the_minimum_or_forever() {
        assert_eq!(parse_error_retention("90"), Ok(Some(90)));
        assert_eq!(parse_error_retention(" 30 "), Ok(Some(30)));
        assert_eq!(parse_error_retention("Sempre"), Ok(None));
        let short = parse_error_retention("29").unwrap_err();
        assert!(short.contains("mínimo é 30 dias"), "{short}");
        assert!(parse_error_retention("0").is_err());
        assert!(parse_error_retention("noventa").is_err());
    }
}
