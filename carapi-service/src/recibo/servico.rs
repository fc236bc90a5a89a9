//! The receipt service that `GET /v1/car/{codigoCar}/recibo` asks: the PDF renderer of this
//! module, or one of the services that fail as the contract's receipt errors say it may
//! (docs/contrato.md, "Error codes": 503 `SERVICO_INDISPONIVEL`, 502 `RECIBO_INDISPONIVEL`),
//! picked once when the server is assembled from [`ReciboModo`] (`serve --recibo`).

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

use super::ReciboError;
use crate::config::ReciboModo;
use crate::dados::Imovel;

/// Where receipts come from.
pub trait ServicoRecibo: Send + Sync + fmt::Debug + 'static {
    /// False while the service is down: the handler answers 503 `SERVICO_INDISPONIVEL` before
    /// reading anything, and charges nothing.
    fn disponivel(&self) -> bool {
        true
    }

    /// The receipt PDF of `imovel`, issued at `emitido_em`.
    ///
    /// # Errors
    /// [`ReciboError`] when it cannot be produced (the handler answers 502
    /// `RECIBO_INDISPONIVEL` and charges nothing).
    fn gerar(
        &self,
        imovel: &Imovel,
        emitido_em: DateTime<FixedOffset>,
    ) -> Result<Vec<u8>, ReciboError>;
}

/// The service [`ReciboModo`] names: [`ReciboPdf`] for `Normal`.
pub fn servico(modo: ReciboModo) -> Arc<dyn ServicoRecibo> {
    match modo {
        ReciboModo::Normal => Arc::new(ReciboPdf),
        ReciboModo::Indisponivel => Arc::new(ReciboForaDoAr),
        ReciboModo::FalhaStream => Arc::new(ReciboQueFalha),
    }
}

/// The real service: [`super::render`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ReciboPdf;

impl ServicoRecibo for ReciboPdf {
    fn gerar(
        &self,
        imovel: &Imovel,
        emitido_em: DateTime<FixedOffset>,
    ) -> Result<Vec<u8>, ReciboError> {
        super::render(imovel, emitido_em)
    }
}

/// A service that is down ([`ReciboModo::Indisponivel`]).
#[derive(Debug, Clone, Copy)]
struct ReciboForaDoAr;

impl ServicoRecibo for ReciboForaDoAr {
    fn disponivel(&self) -> bool {
        false
    }

    fn gerar(&self, _: &Imovel, _: DateTime<FixedOffset>) -> Result<Vec<u8>, ReciboError> {
        Err(ReciboError::Servico("serviço de recibos fora do ar".into()))
    }
}

/// A service that fails after the request was validated ([`ReciboModo::FalhaStream`]).
#[derive(Debug, Clone, Copy)]
struct ReciboQueFalha;

impl ServicoRecibo for ReciboQueFalha {
    fn gerar(&self, _: &Imovel, _: DateTime<FixedOffset>) -> Result<Vec<u8>, ReciboError> {
        Err(ReciboError::Servico(
            "serviço de recibos configurado para falhar (falha-stream)".into(),
        ))
    }
}
