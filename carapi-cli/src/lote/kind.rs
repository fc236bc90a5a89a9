//! The kind of a batch: which lookup it runs, its key kind, price and history endpoint. A leaf
//! of `lote`, so that the output modules (`registro`, `campos`, `exportar`, `saida`) name it
//! without depending on `lote/mod.rs`.

use carapi_sdk::{CodigoCar, CpfCnpj, EndpointConsulta, Precos};
use rust_decimal::Decimal;

use super::entrada::TipoChave;

/// Which lookup a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TipoLote {
    /// dados básicos do CAR (GET /v1/car/{codigo})
    Car,
    /// dados completos, com proprietários (GET /v1/car/{codigo}/completo)
    Completo,
    /// CARs de um CPF/CNPJ (GET /v1/proprietario/{cpfCnpj})
    Proprietario,
    /// recibo de inscrição em PDF (GET /v1/car/{codigo}/recibo)
    Recibo,
}

impl TipoLote {
    /// Whether this lookup takes a CAR code or a CPF/CNPJ.
    pub fn chave(self) -> TipoChave {
        if self == TipoLote::Proprietario {
            TipoChave::Documento
        } else {
            TipoChave::Car
        }
    }

    /// The name typed on the command line (`car`, `completo`, `proprietario`, `recibo`).
    pub fn name(self) -> &'static str {
        match self {
            TipoLote::Car => "car",
            TipoLote::Completo => "completo",
            TipoLote::Proprietario => "proprietario",
            TipoLote::Recibo => "recibo",
        }
    }

    /// The account's price for this lookup.
    pub fn preco(self, p: &Precos) -> Decimal {
        p.preco(self.endpoint())
    }

    /// The history's name of this lookup's endpoint.
    pub fn endpoint(self) -> EndpointConsulta {
        match self {
            TipoLote::Car => EndpointConsulta::CarBasico,
            TipoLote::Completo => EndpointConsulta::CarCompleto,
            TipoLote::Proprietario => EndpointConsulta::Proprietario,
            TipoLote::Recibo => EndpointConsulta::Recibo,
        }
    }

    /// True when `chave` is one of the contract's sandbox values for this lookup (free).
    pub fn is_sandbox(self, chave: &str) -> bool {
        match self.chave() {
            TipoChave::Car => CodigoCar::parse(chave).is_ok_and(|c| c.is_sandbox()),
            TipoChave::Documento => CpfCnpj::parse(chave).is_ok_and(|c| c.is_sandbox()),
        }
    }
}
