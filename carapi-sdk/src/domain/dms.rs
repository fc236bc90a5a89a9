//! Coordinates in degrees-minutes-seconds, as the registry writes them (contract, "coordinates";
//! docs/dominio.md "Coordinates").
//!
//! Shape `<deg>°<min>'<sec>,<hundredths> <S|N|O|L>`; the official receipt also prints `"` after
//! the seconds (`27°38'37,56" S`): both parse. West is `O` (oeste), east `L` (leste). Decimal
//! degrees are negative south and west.

use rust_decimal::{Decimal, RoundingStrategy};

use super::ValidationError;

/// Which axis a coordinate is on, for choosing the hemisphere letter when formatting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Latitude: `N` or `S`.
    Latitude,
    /// Longitude: `L` (east) or `O` (west).
    Longitude,
}

/// Parses a DMS string into decimal degrees (negative for `S` and `O`), rounded to 8 places.
///
/// # Errors
/// [`ValidationError::Format`] when `s` is not of the registry's shape, minutes or seconds
/// are 60 or more, or the value is past 90° for a latitude (`N`, `S`) or 180° for a longitude
/// (`L`, `O`).
///
/// ```
/// use carapi_sdk::domain::dms;
/// assert_eq!(dms::parse("15°47'38,00 S")?.to_string(), "-15.79388889");
/// assert_eq!(dms::parse("27°38'37,56\" S")?.to_string(), "-27.64376667");
/// # Ok::<(), carapi_sdk::domain::ValidationError>(())
/// ```
pub fn parse(s: &str) -> Result<Decimal, ValidationError> {
    let bad = || ValidationError::Format(s.to_owned());
    let t = s.trim();
    let (deg, rest) = t.split_once('°').ok_or_else(bad)?;
    let (min, rest) = rest.split_once('\'').ok_or_else(bad)?;
    let rest = rest.trim_start();
    let hemi = rest.chars().last().ok_or_else(bad)?;
    let sec = rest[..rest.len() - hemi.len_utf8()]
        .trim_end()
        .trim_end_matches('"')
        .trim_end();
    // Latitudes (N/S) reach 90 degrees, longitudes (L/O) 180.
    let (sign, limit) = match hemi.to_ascii_uppercase() {
        'S' => (Decimal::NEGATIVE_ONE, 90),
        'N' => (Decimal::ONE, 90),
        'O' | 'W' => (Decimal::NEGATIVE_ONE, 180),
        'L' | 'E' => (Decimal::ONE, 180),
        _ => return Err(bad()),
    };
    let num = |x: &str| -> Result<Decimal, ValidationError> {
        let x = x.trim();
        if x.is_empty() || !x.chars().all(|c| c.is_ascii_digit() || c == ',') {
            return Err(bad());
        }
        x.replace(',', ".").parse::<Decimal>().map_err(|_| bad())
    };
    let (d, m, sec) = (num(deg)?, num(min)?, num(sec)?);
    let sixty = Decimal::from(60);
    let limit = Decimal::from(limit);
    // Degrees checked before the sum, which would overflow near Decimal::MAX.
    if m >= sixty || sec >= sixty || d > limit {
        return Err(bad());
    }
    let value = d + m / sixty + sec / Decimal::from(3600);
    if value > limit {
        return Err(bad());
    }
    Ok((sign * value).round_dp(8).normalize())
}

/// Formats decimal degrees as DMS with hundredths of a second and no `"`:
/// `-15.793889` on [`Axis::Latitude`] -> `15°47'38,00 S`.
///
/// ```
/// use carapi_sdk::domain::dms::{self, Axis};
/// use rust_decimal::Decimal;
/// use std::str::FromStr;
/// let lon = Decimal::from_str("-47.882778").unwrap();
/// assert_eq!(dms::format(lon, Axis::Longitude), "47°52'58,00 O");
/// ```
#[must_use]
pub fn format(degrees: Decimal, axis: Axis) -> String {
    let hemi = match (axis, degrees.is_sign_negative() && !degrees.is_zero()) {
        (Axis::Latitude, false) => 'N',
        (Axis::Latitude, true) => 'S',
        (Axis::Longitude, false) => 'L',
        (Axis::Longitude, true) => 'O',
    };
    // Work in hundredths of a second so that rounding carries into minutes and degrees.
    let total = (degrees.abs() * Decimal::from(360_000))
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
    let total: u64 = total.try_into().unwrap_or(0);
    let (deg, rem) = (total / 360_000, total % 360_000);
    let (min, rem) = (rem / 6_000, rem % 6_000);
    let (sec, cent) = (rem / 100, rem % 100);
    format!("{deg}°{min:02}'{sec:02},{cent:02} {hemi}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    #[test]
    fn domain_vectors_format() {
        assert_eq!(format(d("-15.793889"), Axis::Latitude), "15°47'38,00 S");
        assert_eq!(format(d("-47.882778"), Axis::Longitude), "47°52'58,00 O");
        assert_eq!(
            format(d("-4.48399759305822"), Axis::Latitude),
            "4°29'02,39 S"
        );
        assert_eq!(
            format(d("0.282749156200535"), Axis::Latitude),
            "0°16'57,90 N"
        );
        assert_eq!(format(d("10.5"), Axis::Longitude), "10°30'00,00 L");
    }

    #[test]
    fn parse_both_forms_and_round_trip() {
        assert_eq!(
            parse("27°38'37,56\" S").unwrap(),
            parse("27°38'37,56 S").unwrap()
        );
        for (lat, txt) in [
            ("-15.793889", "15°47'38,00 S"),
            ("-4.48399759305822", "4°29'02,39 S"),
        ] {
            let back = parse(txt).unwrap();
            assert!((back - d(lat)).abs() < d("0.000003"), "{txt}: {back}");
        }
        assert!(parse("47°52'58,00 O").unwrap().is_sign_negative());
        assert!(parse("47°52'58,00 L").unwrap().is_sign_positive());
    }

    #[test]
    fn parse_rejects() {
        for s in [
            "",
            "15 47 38 S",
            "15°47'38,00",
            "15°61'38,00 S",
            "15°47'38,00 X",
            "a°b'c d",
        ] {
            assert!(parse(s).is_err(), "{s}");
        }
    }

    #[test]
    fn parse_rejects_out_of_range() {
        // Found by fuzz/ (target dms): `144444441544444415°4'0S` was accepted and format() wrote
        // it back as `0°00'00,00 S`; degrees near Decimal::MAX overflowed the sum and panicked.
        for s in [
            "144444441544444415°4'0S",
            "79228162514264337593543950335°59'59,99 N",
            "90°00'00,01 S",
            "91°0'0 N",
            "180°00'00,01 L",
            "181°0'0 O",
        ] {
            assert!(parse(s).is_err(), "{s}");
        }
        assert_eq!(parse("90°00'00,00 S").unwrap(), d("-90"));
        assert_eq!(parse("180°00'00,00 O").unwrap(), d("-180"));
        assert_eq!(parse("179°59'59,99 L").unwrap(), d("179.99999722"));
    }
}
