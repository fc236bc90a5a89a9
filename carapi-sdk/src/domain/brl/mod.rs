//! Money shown to people, `R$ 1.234,56`, and typed by people, `1.500,00` ([`parse_reais`])
//! (docs/dominio.md "Numbers, dates, time zone").
//!
//! Money in this project is always [`Decimal`] in BRL, never `f64`.

mod parse;

use rust_decimal::{Decimal, RoundingStrategy};

pub use parse::{ValorError, parse_reais};

/// Formats an amount in BRL with the Brazilian pattern: `R$ 1.234,56`, `-R$ 0,50`.
///
/// ```
/// use carapi_sdk::domain::brl;
/// use rust_decimal::Decimal;
/// assert_eq!(brl::format(Decimal::new(123456, 2)), "R$ 1.234,56");
/// ```
#[must_use]
pub fn format(value: Decimal) -> String {
    let v = value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    let text = format!("{:.2}", v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, "00"));
    let grouped = super::br::group_thousands(int);
    let sign = if v.is_sign_negative() && !v.is_zero() {
        "-"
    } else {
        ""
    };
    format!("{sign}R$ {grouped},{frac}")
}

/// Rounds to centavos (2 places, half away from zero), the unit the ledger stores.
#[must_use]
pub fn centavos(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format(Decimal::new(0, 0)), "R$ 0,00");
        assert_eq!(format(Decimal::new(5, 1)), "R$ 0,50");
        assert_eq!(format(Decimal::new(100000, 2)), "R$ 1.000,00");
        assert_eq!(format(Decimal::new(123456789, 2)), "R$ 1.234.567,89");
        assert_eq!(format(Decimal::new(-1050, 2)), "-R$ 10,50");
        assert_eq!(format(Decimal::new(1005, 3)), "R$ 1,01");
    }
}
