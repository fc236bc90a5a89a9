//! The reference server as a test double for code built on `carapi-sdk` (cargo feature
//! `testing`, meant for `[dev-dependencies]`).
//!
//! [`TestServer`] is a real server on `127.0.0.1:0` over an in-memory SQLite database (or any
//! database URL), in test mode: a movable clock that every time-based
//! rule reads, faults on demand per endpoint, account and count, and direct access to
//! accounts and payments without HTTP.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use carapi_sdk::dec;
//! use carapi_test_double::{Fault, TestServer};
//!
//! let srv = TestServer::start().await?;
//! let conta = srv.conta().saldo(dec!(50)).legado().create().await?;
//! let client = srv.client(&conta)?;
//! srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}"));
//! srv.advance(Duration::from_secs(11 * 60)).await?;     // the PIX reuse window is over
//! assert_eq!(srv.conta_state(&conta).await?.saldo, dec!(50));
//! # let _ = client; Ok(()) }
//! ```

mod builder;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod test_mode;

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use uuid::Uuid;

pub use crate::test_mode::faults::{Fault, FaultId, FaultLimit, FaultRule, InvalidRule};
pub use crate::test_mode::operations::{ContaState, ImovelChange, OwnerChange};
pub use crate::test_mode::{Advance, TestClock};
pub use builder::TestServerBuilder;
pub use carapi_service::ServerError;
pub use carapi_service::contas::ContaCriada;
/// The CAR records the double serves (the 80 bundled real SICAR records, the sandbox
/// answers): [`dados::bundled`], [`dados::example_documento`].
pub use carapi_service::dados;
pub use carapi_service::store::ContaId;

use crate::test_mode::TestMode;
use crate::test_mode::operations::{self, TestNovaConta};
use carapi_service::startup::RunningServer;
use carapi_service::state::AppState;
use carapi_service::store::Ledger;

/// A test-mode server running in this process. Dropping it stops nothing until the runtime
/// ends; call [`TestServer::shutdown`] for a graceful stop.
#[derive(Debug)]
pub struct TestServer {
    server: RunningServer,
    test: Arc<TestMode>,
}

impl TestServer {
    /// Starts a server on `127.0.0.1:0` over a fresh in-memory SQLite database with the bundled
    /// CAR records and the contract's limits (10 requests per second per key).
    ///
    /// # Errors
    /// [`ServerError`] when the store cannot be opened or the port bound.
    pub async fn start() -> Result<Self, ServerError> {
        Self::builder().start().await
    }

    /// A builder for another database, rate limit or configuration.
    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    /// `http://127.0.0.1:<port>` (no trailing slash).
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The running server (store, state, shutdown token).
    pub fn server(&self) -> &RunningServer {
        &self.server
    }

    fn state(&self) -> &AppState {
        self.server.state()
    }

    /// A builder of a new account: balance 100.00 BRL, current prices, a valid fictitious
    /// CPF, no limits, unless set.
    pub fn conta(&self) -> NovaContaBuilder<'_> {
        NovaContaBuilder {
            srv: self,
            fresh: TestNovaConta::default(),
        }
    }

    /// A `carapi_sdk::ClientBuilder` pointed at this server with `conta`'s key (set more
    /// options, then `build`).
    pub fn client_builder(&self, conta: &ContaCriada) -> carapi_sdk::ClientBuilder {
        carapi_sdk::Client::builder()
            .base_url(self.base_url())
            .api_key(conta.api_key.clone())
    }

    /// A `carapi_sdk::Client` with the SDK's defaults for `conta`.
    ///
    /// # Errors
    /// As `carapi_sdk::ClientBuilder::build`.
    pub fn client(&self, conta: &ContaCriada) -> carapi_sdk::Result<carapi_sdk::Client> {
        self.client_builder(conta).build()
    }

    /// Registers a fault rule ([`Fault`] alone: the next request of any account on any route;
    /// narrow it with [`Fault::on`], [`Fault::of_conta`], [`FaultRule::next_ones`],
    /// [`FaultRule::always`]); rules apply in the order registered.
    ///
    /// # Panics
    /// When the rule names a route that is not a `/v1` route template, or an invalid method: a
    /// mistake in the test, not a condition to handle.
    pub fn inject(&self, rule: impl Into<FaultRule>) -> FaultId {
        match self.try_inject(rule) {
            Ok(id) => id,
            Err(e) => panic!("regra de falha inválida: {e}"),
        }
    }

    /// As [`TestServer::inject`], but an invalid rule is returned, not a panic: for callers
    /// whose rules come from outside Rust (the Python package's `TestServer.inject`).
    ///
    /// # Errors
    /// [`InvalidRule`] when the rule names a route that is not a `/v1` route template, or an
    /// invalid method.
    pub fn try_inject(&self, rule: impl Into<FaultRule>) -> Result<FaultId, InvalidRule> {
        self.test.faults.register(rule.into())
    }

    /// Removes the fault rule `id` (returned by [`TestServer::inject`]); false when it is
    /// gone already.
    pub fn remove_fault(&self, id: FaultId) -> bool {
        self.test.faults.remove(id)
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.test.faults.clear();
    }

    /// The server's clock. Moving it with `TestClock::advance` runs nothing by itself;
    /// [`TestServer::advance`] also runs the jobs that became due.
    pub fn clock(&self) -> &TestClock {
        &self.test.clock
    }

    /// Moves the clock `d` forward and runs what became due before returning: reconciliation
    /// when a whole interval (2 minutes) has passed since its last pass, the retention of
    /// uncharged error rows when an hour has (rows older than
    /// `Config::error_retention_days` are deleted). Past midnight in
    /// Brasília the daily limits start over; past the month, the monthly ones; after 10
    /// minutes a pending top-up is no longer reused.
    ///
    /// # Errors
    /// [`ServerError::Store`] when the reconciliation pass fails.
    pub async fn advance(&self, d: Duration) -> Result<Advance, ServerError> {
        Ok(self.test.advance(self.state(), d).await?)
    }

    /// Changes the data of the CAR record `codigo` ([`ImovelChange`]: its owners, its area, its
    /// name, its matrícula); its last update in the origin base becomes the test clock's
    /// instant, and lookups answer the new data at once. Returns the record as now stored.
    ///
    /// # Errors
    /// [`ServerError::Invalid`] for a malformed code, an invalid document or a negative area;
    /// [`ServerError::NotFound`] when no record has the code; [`ServerError::Store`].
    pub async fn change_imovel(
        &self,
        codigo: &str,
        change: ImovelChange,
    ) -> Result<dados::Imovel, ServerError> {
        operations::change_imovel(self.state(), codigo, change).await
    }

    /// Pays top-up `recarga_id` as the payer and the PSP would (await it): with the signed
    /// webhook by default (the top-up is `Confirmado` when it returns), or
    /// [`Payment::without_webhook`] (only the next reconciliation pass will see it).
    pub fn pay(&self, recarga_id: Uuid) -> Payment<'_> {
        Payment {
            srv: self,
            recarga_id,
            webhook: true,
        }
    }

    /// The state of `conta` as the store has it (balance, limits, the ledger check).
    ///
    /// # Errors
    /// [`ServerError::NotFound`] for an unknown account; [`ServerError::Store`].
    pub async fn conta_state(&self, conta: &ContaCriada) -> Result<ContaState, ServerError> {
        operations::conta_state_of(self.state(), conta.conta_id).await
    }

    /// The ledger sums of `conta` ([`Ledger::is_consistent`] is `carapi-server ledger check`).
    ///
    /// # Errors
    /// As [`RunningServer::check_ledger`].
    pub async fn ledger(&self, conta: &ContaCriada) -> Result<Ledger, ServerError> {
        self.server.check_ledger(conta.conta_id).await
    }

    /// Stops the server gracefully.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// A new account for [`TestServer::conta`]; [`NovaContaBuilder::create`] creates it.
#[derive(Debug)]
#[must_use = "nothing is created until `criar().await`"]
pub struct NovaContaBuilder<'a> {
    srv: &'a TestServer,
    fresh: TestNovaConta,
}

impl NovaContaBuilder<'_> {
    /// Initial balance in BRL (2 decimals at most).
    pub fn saldo(mut self, reais: Decimal) -> Self {
        self.fresh.saldo = reais;
        self
    }

    /// On the legacy price table until its first confirmed top-up.
    pub fn legado(mut self) -> Self {
        self.fresh.legado = true;
        self
    }

    /// The linked user's CPF/CNPJ (with or without mask).
    pub fn documento(mut self, documento: impl Into<String>) -> Self {
        self.fresh.documento = Some(documento.into());
        self
    }

    /// No document: `POST /v1/recarga` answers 400 `DOCUMENTO_AUSENTE`.
    pub fn without_documento(mut self) -> Self {
        self.fresh.documento = None;
        self
    }

    /// Daily limit of charged lookups (Brasília day), 0 to 100000.
    pub fn limite_diario(mut self, n: u32) -> Self {
        self.fresh.limite_diario = Some(n);
        self
    }

    /// Monthly spending limit in BRL (Brasília month), 0 to 1000000.
    pub fn limite_mensal(mut self, reais: Decimal) -> Self {
        self.fresh.limite_mensal = Some(reais);
        self
    }

    /// Creates the account (at the test clock's instant); its key is in the result.
    ///
    /// # Errors
    /// [`ServerError::Invalid`] for a bad balance, document or limit;
    /// [`ServerError::Store`].
    pub async fn create(self) -> Result<ContaCriada, ServerError> {
        operations::create_conta(self.srv.state(), self.fresh).await
    }
}

/// A payment of [`TestServer::pay`]; await it.
#[derive(Debug)]
#[must_use = "nothing is paid until awaited"]
pub struct Payment<'a> {
    srv: &'a TestServer,
    recarga_id: Uuid,
    webhook: bool,
}

impl Payment<'_> {
    /// Pays at the PSP without delivering the webhook: the top-up stays `Pendente` until a
    /// reconciliation pass ([`TestServer::advance`] by 2 minutes) confirms it.
    pub fn without_webhook(mut self) -> Self {
        self.webhook = false;
        self
    }
}

impl<'a> IntoFuture for Payment<'a> {
    type Output = Result<(), ServerError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(operations::pay(
            self.srv.state(),
            &self.srv.test,
            self.recarga_id,
            self.webhook,
        ))
    }
}
