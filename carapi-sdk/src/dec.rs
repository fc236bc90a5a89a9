//! The [`dec!`](crate::dec) macro: a [`Decimal`] literal checked at compile time, usable
//! without depending on `rust_decimal` yourself.

use rust_decimal::Decimal;

/// A BRL amount or any decimal literal as a [`Decimal`](crate::Decimal), evaluated at compile
/// time (a malformed literal fails the build): `dec!(50)`, `dec!(2.30)`, `dec!(-1_500.25)`.
///
/// Unlike `rust_decimal_macros::dec!`, it needs no `rust_decimal` dependency in your crate.
///
/// ```
/// use carapi_sdk::{Decimal, dec};
/// assert_eq!(dec!(2.30), Decimal::new(230, 2));
/// assert_eq!(dec!(-1_500.25), Decimal::new(-150025, 2));
/// let cap = carapi_sdk::Client::builder().max_spend(dec!(50));
/// ```
#[macro_export]
macro_rules! dec {
    ($($literal:tt)+) => {{
        const VALUE: $crate::Decimal = $crate::__dec_parse(stringify!($($literal)+));
        VALUE
    }};
}

/// Parses a decimal literal at compile time (see [`dec!`](crate::dec)); not a public API.
///
/// # Panics
/// On anything but an optional `-`/`+`, digits, `_` and one `.`, or more than 28 digits.
#[doc(hidden)]
#[must_use]
pub const fn __dec_parse(text: &str) -> Decimal {
    let b = text.as_bytes();
    let mut i = 0;
    let mut negative = false;
    let mut mantissa: u128 = 0;
    let mut scale: u32 = 0;
    let mut seen_point = false;
    let mut digits = 0;
    while i < b.len() {
        let c = b[i];
        i += 1;
        match c {
            b' ' | b'_' => {}
            b'-' if digits == 0 && !negative => negative = true,
            b'+' if digits == 0 => {}
            b'.' if !seen_point => seen_point = true,
            b'0'..=b'9' => {
                digits += 1;
                assert!(digits <= 28, "dec!: more than 28 digits");
                mantissa = mantissa * 10 + (c - b'0') as u128;
                if seen_point {
                    scale += 1;
                }
            }
            _ => panic!("dec!: not a decimal literal"),
        }
    }
    assert!(digits > 0, "dec!: no digits");
    let lo = mantissa as u32;
    let mid = (mantissa >> 32) as u32;
    let hi = (mantissa >> 64) as u32;
    Decimal::from_parts(lo, mid, hi, negative, scale)
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn parses_like_from_str() {
        for (got, text) in [
            (crate::dec!(0), "0"),
            (crate::dec!(1.00), "1.00"),
            (crate::dec!(2.3), "2.3"),
            (crate::dec!(-0.01), "-0.01"),
            (crate::dec!(1_000_000), "1000000"),
            (
                crate::dec!(9999999999999999999999999999),
                "9999999999999999999999999999",
            ),
        ] {
            assert_eq!(got, Decimal::from_str(text).unwrap(), "{text}");
            assert_eq!(
                got.scale(),
                Decimal::from_str(text).unwrap().scale(),
                "{text}"
            );
        }
    }
}
