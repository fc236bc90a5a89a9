//! The test mode: the reference server as a stateful test double. Off unless the server is
//! started with it ([`assembly::start`]: `carapi-server serve --modo-teste`, or
//! `carapi_test_double::TestServer`); then it adds
//!
//! - a movable clock ([`TestClock`]) that every time-based rule reads: the 10-minute PIX
//!   reuse window, the daily and monthly limits (Brasília calendar), `GET /v1/uso`'s 30 days,
//!   the timestamps of history, top-ups and accounts, and reconciliation, which runs when the
//!   clock has moved a whole interval (2 minutes) since its last pass
//!   (`TestMode::run_tasks`), and the retention of uncharged error rows, hourly
//!   (`carapi_service::retencao::Job`);
//! - faults on demand (`faults`, applied by `apply`), the connection resets among them
//!   through its own sockets (`connection`);
//! - changes to a CAR record's data (its owners, its area: `operations::change_imovel`), for
//!   tests of code that watches records change;
//! - the `/_teste/...` HTTP routes (`routes`) for clients in other languages and the CLI,
//!   behind their own bearer token.
//!
//! All of it is added from outside when such a server is assembled ([`assembly`]), through the
//! extension points the production server has (its clock, [`carapi_service::http::Extensions`],
//! [`carapi_service::http::server::Connections`], the job loop [`carapi_service::startup`] starts). A server
//! without the test mode has none of this: no routes, no fault layer, no wrapped sockets, the
//! system clock; no production module names this one.

pub(crate) mod apply;
pub mod assembly;
pub(crate) mod clock;
pub(crate) mod connection;
pub(crate) mod faults;
pub(crate) mod operations;
pub(crate) mod routes;

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use subtle::ConstantTimeEq;

pub use clock::TestClock;
use faults::Faults;

use carapi_service::state::AppState;
use carapi_service::store::StoreError;

/// Fewest characters of a `/_teste` token ([`TestModeConfig::token`]): a shorter one is refused
/// at start (the generated one has 54).
pub(crate) const MIN_TOKEN_LEN: usize = 32;

/// How the test mode is configured ([`assembly::start`]).
#[derive(Debug, Clone, Default)]
pub struct TestModeConfig {
    /// Bearer token of the `/_teste` routes; `None` leaves them closed (401) while the Rust API
    /// still works. `carapi-server serve --modo-teste` always sets one. At least
    /// `MIN_TOKEN_LEN` characters ([`assembly::start`] refuses a shorter one).
    pub token: Option<String>,
}

/// State of a test-mode server: its clock, its fault rules, its `/_teste` token.
#[derive(Debug)]
pub struct TestMode {
    /// The clock every time-based rule reads.
    pub(crate) clock: TestClock,
    /// The registered fault rules.
    pub(crate) faults: Faults,
    token: Option<String>,
    /// The test clock's instant of the last reconciliation pass; the lock also serialises
    /// passes.
    last_reconciliation: tokio::sync::Mutex<DateTime<Utc>>,
    /// The server's own address (the webhook is delivered to it), set when it starts serving.
    pub(crate) address: OnceLock<SocketAddr>,
    /// The retention job of uncharged error rows, on the test clock.
    pub(crate) retencao: carapi_service::retencao::Job,
}

/// What moving the test clock forward did (`TestServer::advance`,
/// `POST /_teste/relogio/avancar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Avanco))]
#[serde(rename_all = "camelCase")]
pub struct Advance {
    /// The clock after the move (UTC).
    #[serde(rename = "agora")]
    pub now: DateTime<Utc>,
    /// Top-ups the reconciliation pass it triggered confirmed (0 when none ran).
    #[serde(rename = "reconciliadas")]
    pub reconciled: u32,
}

impl TestMode {
    /// A test mode with the clock at the system time and no faults.
    pub(crate) fn new(config: &TestModeConfig) -> Self {
        let clock = TestClock::new();
        TestMode {
            last_reconciliation: tokio::sync::Mutex::new(clock.now()),
            clock,
            faults: Faults::default(),
            token: config.token.clone().filter(|t| !t.is_empty()),
            address: OnceLock::new(),
            retencao: carapi_service::retencao::Job::default(),
        }
    }

    /// True when `token` is the `/_teste` routes' token (compared in constant time).
    pub(crate) fn token_matches(&self, token: &str) -> bool {
        self.token
            .as_deref()
            .is_some_and(|t| bool::from(t.as_bytes().ct_eq(token.as_bytes())))
    }

    /// Moves the clock `d` forward, then runs what became due (reconciliation when a whole
    /// interval passed since its last pass; the retention of uncharged error rows when an hour
    /// passed since its last pass) before returning.
    ///
    /// # Errors
    /// [`StoreError`] when the reconciliation pass fails.
    pub(crate) async fn advance(&self, st: &AppState, d: Duration) -> Result<Advance, StoreError> {
        let now = self.clock.advance(d);
        let reconciled = self.run_tasks(st).await?;
        self.retencao.turn(st).await;
        Ok(Advance { now, reconciled })
    }

    /// Runs a reconciliation pass when the test clock is at least
    /// [`carapi_service::Config::reconcile_interval`] past the last one; returns how many top-ups it
    /// confirmed. The job loop of a test-mode server ([`assembly::tasks`]) calls it every
    /// second, and
    /// [`TestMode::advance`] after each move.
    ///
    /// # Errors
    /// [`StoreError`] when the pass fails (the last-pass instant is then kept).
    pub(crate) async fn run_tasks(&self, st: &AppState) -> Result<u32, StoreError> {
        let mut last = self.last_reconciliation.lock().await;
        let now = self.clock.now();
        let interval = chrono::Duration::from_std(st.config.reconcile_interval)
            .unwrap_or(chrono::Duration::MAX);
        if now.signed_duration_since(*last) < interval {
            return Ok(0);
        }
        let n = carapi_service::reconcile::run_once(&st.store, &st.pix).await?;
        *last = now;
        Ok(n)
    }
}
