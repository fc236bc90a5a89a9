//! The operations of the contract ([`Op`]): names, routes, which are charged, their prices. A
//! leaf module: the client, the spend guard and the retry policy all read it, and it reads none
//! of them (only the models). The charged lookups are [`EndpointConsulta`]'s table.

use rust_decimal::Decimal;

use crate::{EndpointConsulta, Precos};

/// The operations of the contract, for pricing, retry safety and tracing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// One of the four lookups charged on HTTP 200.
    Consulta(EndpointConsulta),
    Saldo,
    Historico,
    Limites,
    AtualizarLimites,
    Uso,
    FaixasRecarga,
    CriarRecarga,
    Recarga,
    Recargas,
}

impl Op {
    /// `GET /v1/car/{codigoCar}`.
    pub(crate) const CAR: Op = Op::Consulta(EndpointConsulta::CarBasico);
    /// `GET /v1/car/{codigoCar}/completo`.
    pub(crate) const CAR_COMPLETO: Op = Op::Consulta(EndpointConsulta::CarCompleto);
    /// `GET /v1/proprietario/{cpfCnpj}`.
    pub(crate) const PROPRIETARIO: Op = Op::Consulta(EndpointConsulta::Proprietario);
    /// `GET /v1/car/{codigoCar}/recibo`.
    pub(crate) const RECIBO: Op = Op::Consulta(EndpointConsulta::Recibo);

    /// The SDK method name, used in spans and errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Consulta(e) => e.name(),
            Op::Saldo => "saldo",
            Op::Historico => "historico",
            Op::Limites => "limites",
            Op::AtualizarLimites => "atualizar_limites",
            Op::Uso => "uso",
            Op::FaixasRecarga => "faixas_recarga",
            Op::CriarRecarga => "criar_recarga",
            Op::Recarga => "recarga",
            Op::Recargas => "recargas",
        }
    }

    /// The route template of the contract (contract, "Endpoints"), for logs: never the key.
    pub(crate) fn route(self) -> &'static str {
        match self {
            Op::Consulta(e) => e.route(),
            Op::Saldo => "/v1/saldo",
            Op::Historico => "/v1/historico",
            Op::Limites | Op::AtualizarLimites => "/v1/limites",
            Op::Uso => "/v1/uso",
            Op::FaixasRecarga => "/v1/recarga/faixas",
            Op::CriarRecarga => "/v1/recarga",
            Op::Recarga => "/v1/recarga/{recargaId}",
            Op::Recargas => "/v1/recargas",
        }
    }

    /// The charged lookup, for one of the four.
    pub(crate) fn consulta(self) -> Option<EndpointConsulta> {
        match self {
            Op::Consulta(e) => Some(e),
            _ => None,
        }
    }

    /// The charged lookup named `name` (see [`Op::name`]).
    pub(crate) fn charged_by_name(name: &str) -> Option<Op> {
        EndpointConsulta::from_name(name).map(Op::Consulta)
    }

    /// The four lookups charged on HTTP 200 (contract, "Prices").
    pub(crate) fn is_charged(self) -> bool {
        matches!(self, Op::Consulta(_))
    }

    /// The price of a charged lookup under `p`, BRL (zero for free operations; contract,
    /// "Prices").
    pub fn preco(self, p: &Precos) -> Decimal {
        self.consulta().map_or(Decimal::ZERO, |e| p.preco(e))
    }
}
