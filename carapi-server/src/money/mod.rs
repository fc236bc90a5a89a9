//! Money in storage: integer centavos.
//!
//! The wire carries BRL as JSON numbers ([`Decimal`] in the SDK models); the store and the ledger
//! only ever see [`Centavos`], so no rounding happens between a debit and its history row.

use std::fmt;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An amount of money in centavos (1/100 BRL). Signed so that sums and differences are
/// representable; the balance itself is kept non-negative by the store.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Centavos(pub i64);

impl Centavos {
    /// Zero BRL.
    pub const ZERO: Centavos = Centavos(0);

    /// The amount in BRL, with 2 decimal places.
    pub fn reais(self) -> Decimal {
        Decimal::new(self.0, 2)
    }

    /// Converts an amount in BRL that has at most 2 decimal places.
    ///
    /// Returns `None` when the amount has fractions of a centavo or does not fit in an `i64` of
    /// centavos: such an amount is invalid input, never silently rounded.
    pub fn from_reais(valor: Decimal) -> Option<Centavos> {
        let v = valor.normalize();
        if v.scale() > 2 {
            return None;
        }
        let c = v.checked_mul(Decimal::ONE_HUNDRED)?;
        i64::try_from(c).ok().map(Centavos)
    }

    /// The raw count of centavos.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Centavos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&carapi_sdk::domain::brl::format(self.reais()))
    }
}

impl std::ops::Add for Centavos {
    type Output = Centavos;
    fn add(self, o: Centavos) -> Centavos {
        Centavos(self.0 + o.0)
    }
}

impl std::ops::Sub for Centavos {
    type Output = Centavos;
    fn sub(self, o: Centavos) -> Centavos {
        Centavos(self.0 - o.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(
            Centavos::from_reais(Decimal::new(230, 2)),
            Some(Centavos(230))
        );
        assert_eq!(
            Centavos::from_reais(Decimal::new(500, 0)),
            Some(Centavos(50_000))
        );
        assert_eq!(
            Centavos::from_reais(Decimal::new(25050, 3)),
            Some(Centavos(2505))
        );
        assert_eq!(Centavos::from_reais(Decimal::new(1, 3)), None);
        assert_eq!(Centavos(1100).reais().to_string(), "11.00");
        assert_eq!(Centavos(123456).to_string(), "R$ 1.234,56");
    }
}
