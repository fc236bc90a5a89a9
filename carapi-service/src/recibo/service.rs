//! The receipt service that `GET /v1/car/{codigoCar}/recibo` asks: the PDF renderer of this
//! module, or one of the services that fail as the contract's receipt errors say it may
//! (docs/contrato.md, "Error codes": 503 `SERVICO_INDISPONIVEL`, 502 `RECIBO_INDISPONIVEL`),
//! picked once when the server is assembled from [`ReciboMode`] (`serve --recibo`).

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

use super::ReciboError;
use crate::config::ReciboMode;
use crate::dados::Imovel;

/// Where receipts come from.
pub trait ReciboService: Send + Sync + fmt::Debug + 'static {
    /// False while the service is down: the handler answers 503 `SERVICO_INDISPONIVEL` before
    /// reading anything, and charges nothing.
    fn is_available(&self) -> bool {
        true
    }

    /// The receipt PDF of `imovel`, issued at `issued_at`.
    ///
    /// # Errors
    /// [`ReciboError`] when it cannot be produced (the handler answers 502
    /// `RECIBO_INDISPONIVEL` and charges nothing).
    fn generate(
        &self,
        imovel: &Imovel,
        issued_at: DateTime<FixedOffset>,
    ) -> Result<Vec<u8>, ReciboError>;
}

/// The service [`ReciboMode`] names: [`ReciboPdf`] for `Normal`.
pub(crate) fn service(mode: ReciboMode) -> Arc<dyn ReciboService> {
    match mode {
        ReciboMode::Normal => Arc::new(ReciboPdf),
        ReciboMode::Unavailable => Arc::new(ReciboDown),
        ReciboMode::FailureStream => Arc::new(FailingRecibo),
    }
}

/// The real service: [`super::render`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReciboPdf;

impl ReciboService for ReciboPdf {
    fn generate(
        &self,
        imovel: &Imovel,
        issued_at: DateTime<FixedOffset>,
    ) -> Result<Vec<u8>, ReciboError> {
        super::render(imovel, issued_at)
    }
}

/// A service that is down ([`ReciboMode::Unavailable`]).
#[derive(Debug, Clone, Copy)]
struct ReciboDown;

impl ReciboService for ReciboDown {
    fn is_available(&self) -> bool {
        false
    }

    fn generate(&self, _: &Imovel, _: DateTime<FixedOffset>) -> Result<Vec<u8>, ReciboError> {
        Err(ReciboError::Service("serviço de recibos fora do ar".into()))
    }
}

/// A service that fails after the request was validated ([`ReciboMode::FailureStream`]).
#[derive(Debug, Clone, Copy)]
struct FailingRecibo;

impl ReciboService for FailingRecibo {
    fn generate(&self, _: &Imovel, _: DateTime<FixedOffset>) -> Result<Vec<u8>, ReciboError> {
        Err(ReciboError::Service(
            "serviço de recibos configurado para falhar (falha-stream)".into(),
        ))
    }
}
