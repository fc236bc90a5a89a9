//! The registry's Brazilian number and date strings (contract, "Numbers and dates in CAR data").
//!
//! Areas and módulos fiscais use a decimal comma with 4 decimals (`2,0131`); dates are
//! `dd/MM/yyyy HH:mm:ss` in Brasília time.

use chrono::NaiveDateTime;
use rust_decimal::Decimal;

use super::ValidationError;

/// The `dd/MM/yyyy HH:mm:ss` pattern of CAR dates, as a chrono format string.
pub const DATA_FORMAT: &str = "%d/%m/%Y %H:%M:%S";

/// Parses a decimal-comma number (`"2,0131"` -> `2.0131`). A dot is not accepted as the decimal
/// separator; dots as thousands separators (`"1.234,5000"`) are.
///
/// # Errors
/// [`ValidationError::Format`] when `s` is not of that shape.
pub fn parse_decimal(s: &str) -> Result<Decimal, ValidationError> {
    let t = s.trim();
    let (int, frac) = t.split_once(',').unwrap_or((t, ""));
    let int: String = int.chars().filter(|&c| c != '.').collect();
    let ok = !int.is_empty()
        && int
            .trim_start_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit())
        && frac.chars().all(|c| c.is_ascii_digit());
    let joined = if frac.is_empty() {
        int
    } else {
        format!("{int}.{frac}")
    };
    ok.then(|| joined.parse::<Decimal>().ok())
        .flatten()
        .ok_or_else(|| ValidationError::Format(s.to_owned()))
}

/// Formats `value` with a decimal comma and exactly `decimals` places, no thousands separator
/// (`2.0131` with 4 -> `"2,0131"`), as the registry writes areas and módulos.
#[must_use]
pub fn format_decimal(value: Decimal, decimals: u32) -> String {
    let rounded = value.round_dp_with_strategy(
        decimals,
        rust_decimal::RoundingStrategy::MidpointAwayFromZero,
    );
    // Padded by hand: rust_decimal's `{:.N}` panics when the text passes its 32-character buffer
    // (29 integer digits and 4 places). After rounding, the scale is at most `decimals`.
    let mut text = rounded.to_string().replace('.', ",");
    let have = text.split_once(',').map_or(0, |(_, frac)| frac.len());
    if have == 0 && decimals > 0 {
        text.push(',');
    }
    text.extend(std::iter::repeat_n('0', decimals as usize - have));
    text
}

/// Formats a count with a dot between groups of three digits, as Brazilians write it
/// (`1234567` -> `"1.234.567"`); the grouping of [`super::brl::format`] too
/// (docs/dominio.md "Numbers, dates, time zone").
///
/// ```
/// use carapi_sdk::domain::br;
/// assert_eq!(br::format_integer(7_500_000), "7.500.000");
/// ```
#[must_use]
pub fn format_integer(n: u64) -> String {
    group_thousands(&n.to_string())
}

/// `digits` (ASCII digits only) with a dot between groups of three: `"1234"` -> `"1.234"`.
pub(crate) fn group_thousands(digits: &str) -> String {
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push('.');
        }
        s.push(c);
    }
    s
}

/// Folds a Portuguese accented letter to its ASCII base (`'ã'` -> `'a'`, `'Ç'` -> `'C'`); any
/// other character is returned as is. Used where only ASCII fits: PIX BR Code names (BCB manual)
/// and text measured with a PDF base font.
#[must_use]
pub fn strip_accent(c: char) -> char {
    match c {
        'á' | 'à' | 'â' | 'ã' | 'ä' => 'a',
        'Á' | 'À' | 'Â' | 'Ã' | 'Ä' => 'A',
        'é' | 'ê' | 'è' => 'e',
        'É' | 'Ê' | 'È' => 'E',
        'í' | 'î' => 'i',
        'Í' | 'Î' => 'I',
        'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'Ó' | 'Ô' | 'Õ' | 'Ö' => 'O',
        'ú' | 'ü' => 'u',
        'Ú' | 'Ü' => 'U',
        'ç' => 'c',
        'Ç' => 'C',
        _ => c,
    }
}

/// Parses a registry date `dd/MM/yyyy HH:mm:ss` (local Brasília time, no offset).
///
/// # Errors
/// [`ValidationError::Format`] when `s` is not of that shape.
pub fn parse_data(s: &str) -> Result<NaiveDateTime, ValidationError> {
    NaiveDateTime::parse_from_str(s.trim(), DATA_FORMAT)
        .map_err(|_| ValidationError::Format(s.to_owned()))
}

/// Formats a date-time as the registry does: `dd/MM/yyyy HH:mm:ss`.
#[must_use]
pub fn format_data(dt: NaiveDateTime) -> String {
    dt.format(DATA_FORMAT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn counts_in_groups_of_three_with_dots() {
        for (n, expected) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1.000"),
            (150_858, "150.858"),
            (7_500_000, "7.500.000"),
            (u64::MAX, "18.446.744.073.709.551.615"),
        ] {
            assert_eq!(format_integer(n), expected);
        }
    }

    #[test]
    fn decimal_comma_round_trip() {
        let d = parse_decimal("2,0131").unwrap();
        assert_eq!(d, Decimal::from_str("2.0131").unwrap());
        assert_eq!(format_decimal(d, 4), "2,0131");
        assert_eq!(
            format_decimal(Decimal::from_str("91.11925").unwrap(), 4),
            "91,1193"
        );
        assert_eq!(format_decimal(Decimal::from(3), 4), "3,0000");
        assert_eq!(
            parse_decimal("1.234,5000").unwrap(),
            Decimal::from_str("1234.5").unwrap()
        );
        assert_eq!(parse_decimal("12").unwrap(), Decimal::from(12));
    }

    #[test]
    fn decimal_rejects_other_shapes() {
        for s in ["", "abc", "2,01a", ",5", "1,2,3"] {
            assert!(parse_decimal(s).is_err(), "{s}");
        }
    }

    #[test]
    fn dates() {
        let d = parse_data("09/05/2014 17:16:10").unwrap();
        assert_eq!(d.to_string(), "2014-05-09 17:16:10");
        assert_eq!(format_data(d), "09/05/2014 17:16:10");
        assert!(parse_data("2014-05-09T17:16:10").is_err());
    }

    #[test]
    fn format_decimal_wide_values() {
        // Found by fuzz/ (target br_decimal): 29 integer digits with 4 places overflowed
        // rust_decimal's 32-character formatting buffer and panicked.
        let d = parse_decimal("30033006661600666006661616661").unwrap();
        assert_eq!(format_decimal(d, 4), "30033006661600666006661616661,0000");
        assert_eq!(parse_decimal(&format_decimal(d, 4)).unwrap(), d);
        assert_eq!(
            format_decimal(Decimal::MIN, 2),
            "-79228162514264337593543950335,00"
        );
        assert_eq!(format_decimal(Decimal::new(-5, 1), 0), "-1");
        assert_eq!(
            format_decimal(Decimal::new(1, 28), 28),
            "0,0000000000000000000000000001"
        );
    }
}
