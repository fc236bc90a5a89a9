//! The price of each charged lookup under the contract's two tables (contract, "Prices"):
//! [`Precos`], [`Precos::ATUAIS`], [`Precos::LEGADOS`] and [`Precos::preco`]. The SDK's spend
//! guard, the CLI and the reference server all read them from here.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::EndpointConsulta;

/// Precos: the effective price, in BRL per HTTP 200, of each charged lookup for the authenticated
/// account (contract, "Prices"; "Precos"). Legacy accounts keep the legacy table until their
/// first confirmed top-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Precos {
    /// `GET /v1/car/{codigoCar}`: 1.00 current, 0.50 legacy.
    #[serde(with = "rust_decimal::serde::float")]
    pub car_basico: Decimal,
    /// `GET /v1/car/{codigoCar}/completo`: 2.30 current, 1.50 legacy.
    #[serde(with = "rust_decimal::serde::float")]
    pub car_completo: Decimal,
    /// `GET /v1/proprietario/{cpfCnpj}`: 2.60 current, 1.50 legacy.
    #[serde(with = "rust_decimal::serde::float")]
    pub proprietario: Decimal,
    /// `GET /v1/car/{codigoCar}/recibo`: 11.00 current, 10.00 legacy.
    #[serde(with = "rust_decimal::serde::float")]
    pub recibo: Decimal,
}

impl Precos {
    /// The contract's current price table.
    pub const ATUAIS: Precos = Precos {
        car_basico: Decimal::from_parts(100, 0, 0, false, 2),
        car_completo: Decimal::from_parts(230, 0, 0, false, 2),
        proprietario: Decimal::from_parts(260, 0, 0, false, 2),
        recibo: Decimal::from_parts(1100, 0, 0, false, 2),
    };
    /// The contract's legacy price table.
    pub const LEGADOS: Precos = Precos {
        car_basico: Decimal::from_parts(50, 0, 0, false, 2),
        car_completo: Decimal::from_parts(150, 0, 0, false, 2),
        proprietario: Decimal::from_parts(150, 0, 0, false, 2),
        recibo: Decimal::from_parts(1000, 0, 0, false, 2),
    };

    /// The price, in BRL, of one HTTP 200 of `endpoint` under this table (contract, "Prices":
    /// only a 200 is charged).
    pub fn preco(&self, endpoint: EndpointConsulta) -> Decimal {
        match endpoint {
            EndpointConsulta::CarBasico => self.car_basico,
            EndpointConsulta::CarCompleto => self.car_completo,
            EndpointConsulta::Proprietario => self.proprietario,
            EndpointConsulta::Recibo => self.recibo,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_per_endpoint() {
        assert_eq!(
            Precos::ATUAIS.preco(EndpointConsulta::CarCompleto),
            Decimal::new(230, 2)
        );
        assert_eq!(
            Precos::LEGADOS.preco(EndpointConsulta::Recibo),
            Decimal::new(1000, 2)
        );
    }
}
