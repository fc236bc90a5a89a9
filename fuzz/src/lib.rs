//! Helpers shared by the fuzz targets in `fuzz_targets/`.

use rust_decimal::Decimal;

/// Builds any representable [`Decimal`] from 16 fuzzer bytes: a 96-bit mantissa, a sign and a
/// scale in `0..=28`.
pub fn decimal(bytes: [u8; 16]) -> Decimal {
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let negative = bytes[12] & 1 == 1;
    let scale = u32::from(bytes[13]) % (Decimal::MAX_SCALE + 1);
    Decimal::from_parts(word(0), word(4), word(8), negative, scale)
}

/// The normalisation [`carapi_sdk::CodigoCar::parse`] documents: no white space, no dots,
/// ASCII upper case.
pub fn normalise_codigo(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// The normalisation [`carapi_sdk::CpfCnpj::parse`] documents: no white space, no `.`, `/`, `-`,
/// ASCII upper case.
pub fn normalise_documento(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '.' | '/' | '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect()
}
