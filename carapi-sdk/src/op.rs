//! The operations of the contract ([`Op`]): names, routes, which are charged, their prices. A
//! leaf module: the client, the spend guard and the retry policy all read it, and it reads none
//! of them (only the models).

use rust_decimal::Decimal;

use crate::{EndpointConsulta, Precos};

/// The operations of the contract, for pricing, retry safety and tracing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Car,
    CarCompleto,
    Proprietario,
    Recibo,
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
    /// The SDK method name, used in spans and errors.
    pub(crate) fn name(self) -> &'static str {
        if let Some(e) = self.endpoint_consulta() {
            return e.name();
        }
        match self {
            Op::Car | Op::CarCompleto | Op::Proprietario | Op::Recibo => unreachable!(),
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
        if let Some(e) = self.endpoint_consulta() {
            return e.route();
        }
        match self {
            Op::Car | Op::CarCompleto | Op::Proprietario | Op::Recibo => unreachable!(),
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

    /// The registered form the history uses for a charged lookup.
    pub(crate) fn endpoint_consulta(self) -> Option<EndpointConsulta> {
        match self {
            Op::Car => Some(EndpointConsulta::CarBasico),
            Op::CarCompleto => Some(EndpointConsulta::CarCompleto),
            Op::Proprietario => Some(EndpointConsulta::Proprietario),
            Op::Recibo => Some(EndpointConsulta::Recibo),
            _ => None,
        }
    }

    /// The charged lookup named `name` (see [`Op::name`]).
    pub(crate) fn charged_by_name(name: &str) -> Option<Op> {
        [Op::Car, Op::CarCompleto, Op::Proprietario, Op::Recibo]
            .into_iter()
            .find(|op| op.name() == name)
    }

    /// The four lookups charged on HTTP 200 (contract, "Prices").
    pub(crate) fn is_charged(self) -> bool {
        matches!(
            self,
            Op::Car | Op::CarCompleto | Op::Proprietario | Op::Recibo
        )
    }

    /// The price of a charged lookup under `p`, BRL (zero for free operations; contract,
    /// "Prices").
    pub fn preco(self, p: &Precos) -> Decimal {
        self.endpoint_consulta()
            .map_or(Decimal::ZERO, |e| p.preco(e))
    }
}
