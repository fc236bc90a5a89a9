//! The money core: every money rule of the server as pure functions of data (no I/O, no SQL,
//! no async, no clock of its own), so that one place decides and both stores only apply.
//!
//! A store reads the state a rule needs inside its transaction, calls the plan function and
//! writes what the plan says, in the same transaction:
//!
//! - `cobranca`: a charged lookup (the debit or the refusal with its status and
//!   `Retry-After`, the history row with both balances, the ledger row, the day's counters,
//!   the consolidation) and the uncharged history row;
//! - `estorno`: the reversal, once, of a charge whose answer was an error (a journaled lost
//!   commit that did commit): the compensating ledger credit and the counters it lowers;
//! - [`recarga`]: a top-up's amount, bonus and reuse decision (`POST /v1/recarga`), its
//!   confirmation (credit of amount plus bonus, move from the legacy to the current price
//!   table) and the preview of `GET /v1/recarga/faixas`;
//! - [`tarifa`]: the price of each endpoint under the account's table and the bonus of an
//!   amount (the tables themselves are the SDK's, [`carapi_sdk::FAIXAS_BONUS`] and
//!   [`carapi_sdk::Precos`]);
//! - [`calendar`]: the Brasília day and month that scope the limits, and their
//!   `Retry-After`;
//! - [`limites`]: the range rules of `PUT /v1/limites`;
//! - [`retencao`]: which uncharged error rows the retention deletes, and the positions and
//!   counters it leaves true.
//!
//! Money is [`Centavos`] (integer centavos) from the wire's `Decimal` on: no floating point
//! anywhere in this module. This module imports nothing else of the crate: the stores, the
//! HTTP handlers and the limiters depend on it, never the reverse.

pub mod calendar;
pub(crate) mod cobranca;
pub(crate) mod estorno;
pub mod limites;
pub mod recarga;
pub mod retencao;
pub mod tarifa;

pub use cobranca::CobrancaResult;
pub use recarga::{Confirmation, Recarga};

use std::fmt;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// An amount of money in centavos (1/100 BRL). Signed so that sums and differences are
/// representable; the balance itself is kept non-negative by the store. Arithmetic is checked:
/// a sum or difference out of `i64` is [`Overflow`], never a wrapped amount.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Centavos(i64);

/// A sum or difference of [`Centavos`] that `i64` cannot hold (about 92 quadrillion BRL): no
/// real amount, so an input or stored value is wrong, and nothing is computed with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("valor em centavos fora do intervalo representável")]
pub struct Overflow;

impl Centavos {
    /// Zero BRL.
    pub const ZERO: Centavos = Centavos(0);

    /// `centavos` (1/100 BRL).
    pub const fn new(centavos: i64) -> Centavos {
        Centavos(centavos)
    }

    /// `self + o`.
    ///
    /// # Errors
    /// [`Overflow`] when the sum does not fit.
    pub fn checked_add(self, o: Centavos) -> Result<Centavos, Overflow> {
        self.0.checked_add(o.0).map(Centavos).ok_or(Overflow)
    }

    /// `self - o`.
    ///
    /// # Errors
    /// [`Overflow`] when the difference does not fit.
    pub fn checked_sub(self, o: Centavos) -> Result<Centavos, Overflow> {
        self.0.checked_sub(o.0).map(Centavos).ok_or(Overflow)
    }

    /// The amount in BRL, with 2 decimal places.
    pub fn reais(self) -> Decimal {
        Decimal::new(self.0, 2)
    }

    /// Converts an amount in BRL that has at most 2 decimal places.
    ///
    /// Returns `None` when the amount has fractions of a centavo or does not fit in an `i64` of
    /// centavos: such an amount is invalid input, never silently rounded.
    pub(crate) fn from_reais(valor: Decimal) -> Option<Centavos> {
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

/// Identifier of an API account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ContaId(pub i64);

impl fmt::Display for ContaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for ContaId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(ContaId)
    }
}

impl fmt::Display for Centavos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&carapi_sdk::domain::brl::format(self.reais()))
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

    #[test]
    fn sums_and_differences_out_of_range_are_errors_not_wraps() {
        let max = Centavos::new(i64::MAX);
        assert_eq!(max.checked_add(Centavos::new(1)), Err(Overflow));
        assert_eq!(
            Centavos::new(i64::MIN).checked_sub(Centavos::new(1)),
            Err(Overflow)
        );
        assert_eq!(
            Centavos::new(230).checked_add(Centavos::new(770)),
            Ok(Centavos::new(1000))
        );
        assert_eq!(
            Centavos::new(1000).checked_sub(Centavos::new(230)),
            Ok(Centavos::new(770))
        );
    }
}
