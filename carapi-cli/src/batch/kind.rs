//! The kind of a batch: which lookup it runs, its key kind, price and history endpoint. A leaf
//! of `lote`, so that the output modules (`record`, `columns`, `export`, `output`) name it
//! without depending on `lote/mod.rs`.

use carapi_sdk::{CodigoCar, CpfCnpj, EndpointConsulta, Precos};
use rust_decimal::Decimal;

use super::input::ChaveKind;

/// Which lookup a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BatchKind {
    /// dados básicos do CAR (GET /v1/car/{codigo})
    Car,
    /// dados completos, com proprietários (GET /v1/car/{codigo}/completo)
    Completo,
    /// CARs de um CPF/CNPJ (GET /v1/proprietario/{cpfCnpj})
    Proprietario,
    /// recibo de inscrição em PDF (GET /v1/car/{codigo}/recibo)
    Recibo,
}

impl BatchKind {
    /// Whether this lookup takes a CAR code or a CPF/CNPJ.
    pub(crate) fn chave_kind(self) -> ChaveKind {
        if self == BatchKind::Proprietario {
            ChaveKind::Document
        } else {
            ChaveKind::Car
        }
    }

    /// The name typed on the command line (`car`, `completo`, `proprietario`, `recibo`).
    pub(crate) fn name(self) -> &'static str {
        self.endpoint().short_name()
    }

    /// The account's price for this lookup.
    pub(crate) fn preco(self, p: &Precos) -> Decimal {
        p.preco(self.endpoint())
    }

    /// The history's name of this lookup's endpoint.
    pub(crate) fn endpoint(self) -> EndpointConsulta {
        match self {
            BatchKind::Car => EndpointConsulta::CarBasico,
            BatchKind::Completo => EndpointConsulta::CarCompleto,
            BatchKind::Proprietario => EndpointConsulta::Proprietario,
            BatchKind::Recibo => EndpointConsulta::Recibo,
        }
    }

    /// True when `chave` is one of the contract's sandbox values for this lookup (free).
    pub(crate) fn is_sandbox(self, chave: &str) -> bool {
        match self.chave_kind() {
            ChaveKind::Car => CodigoCar::parse(chave).is_ok_and(|c| c.is_sandbox()),
            ChaveKind::Document => CpfCnpj::parse(chave).is_ok_and(|c| c.is_sandbox()),
        }
    }
}
