//! The reference server as a test double for code built on `carapi-sdk` (cargo feature
//! `testing`, meant for `[dev-dependencies]`).
//!
//! [`ServidorTeste`] is a real server on `127.0.0.1:0` over an in-memory SQLite database (or any
//! database URL), in test mode: a movable clock that every time-based
//! rule reads, faults on demand per endpoint, account and count, and direct access to
//! accounts and payments without HTTP.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use carapi_sdk::dec;
//! use carapi_test_double::{Falha, ServidorTeste};
//!
//! let srv = ServidorTeste::iniciar().await?;
//! let conta = srv.conta().saldo(dec!(50)).legado().criar().await?;
//! let client = srv.client(&conta)?;
//! srv.falhar(Falha::PerderRespostaAposCobrar.em("/v1/car/{codigoCar}"));
//! srv.avancar(Duration::from_secs(11 * 60)).await?;     // the PIX reuse window is over
//! assert_eq!(srv.conta_de(&conta).await?.saldo, dec!(50));
//! # let _ = client; Ok(()) }
//! ```

mod construtor;
pub mod modo_teste;
#[cfg(feature = "openapi")]
pub mod openapi;

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rust_decimal::Decimal;
use uuid::Uuid;

pub use crate::modo_teste::falhas::{Falha, IdFalha, LimiteFalha, RegraFalha, RegraInvalida};
pub use crate::modo_teste::operacoes::EstadoConta;
pub use crate::modo_teste::{Avanco, RelogioTeste};
pub use carapi_service::ServerError;
pub use carapi_service::contas::ContaCriada;
pub use carapi_service::store::ContaId;
pub use construtor::ConstrutorTeste;

use crate::modo_teste::ModoTeste;
use crate::modo_teste::operacoes::{self, NovaContaTeste};
use carapi_service::startup::RunningServer;
use carapi_service::state::AppState;
use carapi_service::store::Razao;

/// A test-mode server running in this process. Dropping it stops nothing until the runtime
/// ends; call [`ServidorTeste::encerrar`] for a graceful stop.
#[derive(Debug)]
pub struct ServidorTeste {
    servidor: RunningServer,
    teste: Arc<ModoTeste>,
}

impl ServidorTeste {
    /// Starts a server on `127.0.0.1:0` over a fresh in-memory SQLite database with the bundled
    /// CAR records and the contract's limits (10 requests per second per key).
    ///
    /// # Errors
    /// [`ServerError`] when the store cannot be opened or the port bound.
    pub async fn iniciar() -> Result<Self, ServerError> {
        Self::construtor().iniciar().await
    }

    /// A builder for another database, rate limit or configuration.
    pub fn construtor() -> ConstrutorTeste {
        ConstrutorTeste::default()
    }

    /// `http://127.0.0.1:<port>` (no trailing slash).
    pub fn base_url(&self) -> String {
        self.servidor.base_url()
    }

    /// The running server (store, state, shutdown token).
    pub fn servidor(&self) -> &RunningServer {
        &self.servidor
    }

    fn state(&self) -> &AppState {
        self.servidor.state()
    }

    /// A builder of a new account: balance 100.00 BRL, current prices, a valid fictitious
    /// CPF, no limits, unless set.
    pub fn conta(&self) -> NovaContaBuilder<'_> {
        NovaContaBuilder {
            srv: self,
            nova: NovaContaTeste::default(),
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

    /// Registers a fault rule ([`Falha`] alone: the next request of any account on any route;
    /// narrow it with [`Falha::em`], [`Falha::da_conta`], [`RegraFalha::proximas`],
    /// [`RegraFalha::sempre`]); rules apply in the order registered.
    ///
    /// # Panics
    /// When the rule names a route that is not a `/v1` route template, or an invalid method: a
    /// mistake in the test, not a condition to handle.
    pub fn falhar(&self, regra: impl Into<RegraFalha>) -> IdFalha {
        match self.tentar_falhar(regra) {
            Ok(id) => id,
            Err(e) => panic!("regra de falha inválida: {e}"),
        }
    }

    /// As [`ServidorTeste::falhar`], but an invalid rule is returned, not a panic: for callers
    /// whose rules come from outside Rust (the Python package's `ServidorTeste.falhar`).
    ///
    /// # Errors
    /// [`RegraInvalida`] when the rule names a route that is not a `/v1` route template, or an
    /// invalid method.
    pub fn tentar_falhar(&self, regra: impl Into<RegraFalha>) -> Result<IdFalha, RegraInvalida> {
        self.teste.falhas.registrar(regra.into())
    }

    /// Removes the fault rule `id` (returned by [`ServidorTeste::falhar`]); false when it is
    /// gone already.
    pub fn remover_falha(&self, id: IdFalha) -> bool {
        self.teste.falhas.remover(id)
    }

    /// Removes every fault rule.
    pub fn limpar_falhas(&self) {
        self.teste.falhas.limpar();
    }

    /// The server's clock. Moving it with [`RelogioTeste::avancar`] runs nothing by itself;
    /// [`ServidorTeste::avancar`] also runs the jobs that became due.
    pub fn relogio(&self) -> &RelogioTeste {
        &self.teste.relogio
    }

    /// Moves the clock `d` forward and runs what became due before returning: reconciliation
    /// when a whole interval (2 minutes) has passed since its last pass. Past midnight in
    /// Brasília the daily limits start over; past the month, the monthly ones; after 10
    /// minutes a pending top-up is no longer reused.
    ///
    /// # Errors
    /// [`ServerError::Store`] when the reconciliation pass fails.
    pub async fn avancar(&self, d: Duration) -> Result<Avanco, ServerError> {
        Ok(self.teste.avancar(self.state(), d).await?)
    }

    /// Pays top-up `recarga_id` as the payer and the PSP would (await it): with the signed
    /// webhook by default (the top-up is `Confirmado` when it returns), or
    /// [`Pagamento::sem_webhook`] (only the next reconciliation pass will see it).
    pub fn pagar(&self, recarga_id: Uuid) -> Pagamento<'_> {
        Pagamento {
            srv: self,
            recarga_id,
            webhook: true,
        }
    }

    /// The state of `conta` as the store has it (balance, limits, the ledger check).
    ///
    /// # Errors
    /// [`ServerError::NaoEncontrado`] for an unknown account; [`ServerError::Store`].
    pub async fn conta_de(&self, conta: &ContaCriada) -> Result<EstadoConta, ServerError> {
        operacoes::estado_conta(self.state(), conta.conta_id).await
    }

    /// The ledger sums of `conta` ([`Razao::consistente`] is `carapi-server ledger check`).
    ///
    /// # Errors
    /// As [`RunningServer::verificar_razao`].
    pub async fn razao(&self, conta: &ContaCriada) -> Result<Razao, ServerError> {
        self.servidor.verificar_razao(conta.conta_id).await
    }

    /// Stops the server gracefully.
    pub async fn encerrar(self) {
        self.servidor.shutdown().await;
    }
}

/// A new account for [`ServidorTeste::conta`]; [`NovaContaBuilder::criar`] creates it.
#[derive(Debug)]
#[must_use = "nothing is created until `criar().await`"]
pub struct NovaContaBuilder<'a> {
    srv: &'a ServidorTeste,
    nova: NovaContaTeste,
}

impl NovaContaBuilder<'_> {
    /// Initial balance in BRL (2 decimals at most).
    pub fn saldo(mut self, reais: Decimal) -> Self {
        self.nova.saldo = reais;
        self
    }

    /// On the legacy price table until its first confirmed top-up.
    pub fn legado(mut self) -> Self {
        self.nova.legado = true;
        self
    }

    /// The linked user's CPF/CNPJ (with or without mask).
    pub fn documento(mut self, documento: impl Into<String>) -> Self {
        self.nova.documento = Some(documento.into());
        self
    }

    /// No document: `POST /v1/recarga` answers 400 `DOCUMENTO_AUSENTE`.
    pub fn sem_documento(mut self) -> Self {
        self.nova.documento = None;
        self
    }

    /// Daily limit of charged lookups (Brasília day), 0 to 100000.
    pub fn limite_diario(mut self, n: u32) -> Self {
        self.nova.limite_diario = Some(n);
        self
    }

    /// Monthly spending limit in BRL (Brasília month), 0 to 1000000.
    pub fn limite_mensal(mut self, reais: Decimal) -> Self {
        self.nova.limite_mensal = Some(reais);
        self
    }

    /// Creates the account (at the test clock's instant); its key is in the result.
    ///
    /// # Errors
    /// [`ServerError::Invalido`] for a bad balance, document or limit;
    /// [`ServerError::Store`].
    pub async fn criar(self) -> Result<ContaCriada, ServerError> {
        operacoes::criar_conta(self.srv.state(), self.nova).await
    }
}

/// A payment of [`ServidorTeste::pagar`]; await it.
#[derive(Debug)]
#[must_use = "nothing is paid until awaited"]
pub struct Pagamento<'a> {
    srv: &'a ServidorTeste,
    recarga_id: Uuid,
    webhook: bool,
}

impl Pagamento<'_> {
    /// Pays at the PSP without delivering the webhook: the top-up stays `Pendente` until a
    /// reconciliation pass ([`ServidorTeste::avancar`] by 2 minutes) confirms it.
    pub fn sem_webhook(mut self) -> Self {
        self.webhook = false;
        self
    }
}

impl<'a> IntoFuture for Pagamento<'a> {
    type Output = Result<(), ServerError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(operacoes::pagar(
            self.srv.state(),
            &self.srv.teste,
            self.recarga_id,
            self.webhook,
        ))
    }
}
