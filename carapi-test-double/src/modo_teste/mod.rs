//! The test mode: the reference server as a stateful test double. Off unless the server is
//! started with it ([`montagem::iniciar`]: `carapi-server serve --modo-teste`, or
//! `carapi_test_double::ServidorTeste`); then it adds
//!
//! - a movable clock ([`RelogioTeste`]) that every time-based rule reads: the 10-minute PIX
//!   reuse window, the daily and monthly limits (Brasília calendar), `GET /v1/uso`'s 30 days,
//!   the timestamps of history, top-ups and accounts, and reconciliation, which runs when the
//!   clock has moved a whole interval (2 minutes) since its last pass
//!   ([`ModoTeste::rodar_tarefas`]);
//! - faults on demand ([`falhas`], applied by [`aplicar`]), the connection resets among them
//!   through its own sockets ([`conexao`]);
//! - the `/_teste/...` HTTP routes ([`rotas`]) for clients in other languages and the CLI,
//!   behind their own bearer token.
//!
//! All of it is added from outside when such a server is assembled ([`montagem`]), through the
//! extension points the production server has (its clock, [`carapi_service::http::Acrescimos`],
//! [`carapi_service::http::servidor::Conexoes`], the job loop [`carapi_service::startup`] starts). A server
//! without the test mode has none of this: no routes, no fault layer, no wrapped sockets, the
//! system clock; no production module names this one.

pub mod aplicar;
pub mod conexao;
pub mod falhas;
pub mod montagem;
pub mod operacoes;
pub mod relogio;
pub mod rotas;

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use subtle::ConstantTimeEq;

use falhas::Falhas;
pub use relogio::RelogioTeste;

use carapi_service::state::AppState;
use carapi_service::store::StoreError;

/// Fewest characters of a `/_teste` token ([`ConfigTeste::token`]): a shorter one is refused
/// at start (the generated one has 54).
pub const TOKEN_MINIMO: usize = 32;

/// How the test mode is configured ([`montagem::iniciar`]).
#[derive(Debug, Clone, Default)]
pub struct ConfigTeste {
    /// Bearer token of the `/_teste` routes; `None` leaves them closed (401) while the Rust API
    /// still works. `carapi-server serve --modo-teste` always sets one. At least
    /// [`TOKEN_MINIMO`] characters ([`montagem::iniciar`] refuses a shorter one).
    pub token: Option<String>,
}

/// State of a test-mode server: its clock, its fault rules, its `/_teste` token.
#[derive(Debug)]
pub struct ModoTeste {
    /// The clock every time-based rule reads.
    pub relogio: RelogioTeste,
    /// The registered fault rules.
    pub falhas: Falhas,
    token: Option<String>,
    /// The test clock's instant of the last reconciliation pass; the lock also serialises
    /// passes.
    ultima_reconciliacao: tokio::sync::Mutex<DateTime<Utc>>,
    /// The server's own address (the webhook is delivered to it), set when it starts serving.
    pub(crate) endereco: OnceLock<SocketAddr>,
}

/// What moving the test clock forward did (`ServidorTeste::avancar`,
/// `POST /_teste/relogio/avancar`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Avanco {
    /// The clock after the move (UTC).
    pub agora: DateTime<Utc>,
    /// Top-ups the reconciliation pass it triggered confirmed (0 when none ran).
    pub reconciliadas: u32,
}

impl ModoTeste {
    /// A test mode with the clock at the system time and no faults.
    pub fn new(config: &ConfigTeste) -> Self {
        let relogio = RelogioTeste::new();
        ModoTeste {
            ultima_reconciliacao: tokio::sync::Mutex::new(relogio.agora()),
            relogio,
            falhas: Falhas::default(),
            token: config.token.clone().filter(|t| !t.is_empty()),
            endereco: OnceLock::new(),
        }
    }

    /// True when `token` is the `/_teste` routes' token (compared in constant time).
    pub fn confere_token(&self, token: &str) -> bool {
        self.token
            .as_deref()
            .is_some_and(|t| bool::from(t.as_bytes().ct_eq(token.as_bytes())))
    }

    /// Moves the clock `d` forward, then runs what became due (reconciliation when a whole
    /// interval passed since its last pass) before returning.
    ///
    /// # Errors
    /// [`StoreError`] when the reconciliation pass fails.
    pub async fn avancar(&self, st: &AppState, d: Duration) -> Result<Avanco, StoreError> {
        let agora = self.relogio.avancar(d);
        let reconciliadas = self.rodar_tarefas(st).await?;
        Ok(Avanco {
            agora,
            reconciliadas,
        })
    }

    /// Runs a reconciliation pass when the test clock is at least
    /// [`carapi_service::Config::reconcile_interval`] past the last one; returns how many top-ups it
    /// confirmed. The job loop of a test-mode server ([`montagem::tarefas`]) calls it every
    /// second, and
    /// [`ModoTeste::avancar`] after each move.
    ///
    /// # Errors
    /// [`StoreError`] when the pass fails (the last-pass instant is then kept).
    pub async fn rodar_tarefas(&self, st: &AppState) -> Result<u32, StoreError> {
        let mut ultima = self.ultima_reconciliacao.lock().await;
        let agora = self.relogio.agora();
        let intervalo = chrono::Duration::from_std(st.config.reconcile_interval)
            .unwrap_or(chrono::Duration::MAX);
        if agora.signed_duration_since(*ultima) < intervalo {
            return Ok(0);
        }
        let n = carapi_service::reconcile::executar(&st.store, &st.pix).await?;
        *ultima = agora;
        Ok(n)
    }
}
