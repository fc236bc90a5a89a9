use std::fmt;
use std::str::FromStr;

use super::{ValidationError, uf};
use crate::sandbox;

/// A CAR code (`codigoCar`), normalised and shape-checked: `UF-IIIIIII-HHHH…` with a known UF,
/// the 7-digit IBGE municipality code whose first two digits are that UF's, and 32 upper-case
/// hexadecimal characters (docs/dominio.md "CAR code"), or one of the [`sandbox`] codes.
///
/// Parsing removes dots and white space and upper-cases, so the dotted form printed on receipts
/// (`PI-2200053-1BAB.C06A.E224.43BC.A804.FFEC.51C2.5EB9`) is accepted. No check digit exists for
/// the hash, so none is checked; the municipality may differ from the record's current one.
///
/// ```
/// use carapi_sdk::CodigoCar;
/// let c: CodigoCar = "df-5300108-b69b.317d.d02c.43da.a77a.0784.aeef.7d47".parse()?;
/// assert_eq!(c.as_str(), "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47");
/// assert_eq!(c.uf(), "DF");
/// assert_eq!(c.municipio_ibge(), Some(5300108));
/// # Ok::<(), carapi_sdk::domain::ValidationError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodigoCar(String);

impl CodigoCar {
    /// Normalises and validates `input`.
    ///
    /// # Errors
    /// [`ValidationError::CodigoCar`] when the result is neither a sandbox code nor of the
    /// registry's shape.
    pub fn parse(input: impl AsRef<str>) -> Result<Self, ValidationError> {
        let raw = input.as_ref();
        let normalised: String = raw
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '.')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if sandbox::is_codigo_car(&normalised) || is_valid_shape(&normalised) {
            Ok(Self(normalised))
        } else {
            Err(ValidationError::CodigoCar(raw.to_owned()))
        }
    }

    /// The normalised code, as the API and the registry write it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The two-letter UF (`"ZZ"` for sandbox codes).
    #[must_use]
    pub fn uf(&self) -> &str {
        &self.0[..2]
    }

    /// The 7-digit IBGE municipality code embedded in the code (`None` for sandbox codes,
    /// whose `0000000` names no municipality).
    ///
    /// ```
    /// # use carapi_sdk::{CodigoCar, sandbox};
    /// assert_eq!(CodigoCar::parse(sandbox::CAR_BASICO)?.municipio_ibge(), None);
    /// # Ok::<(), carapi_sdk::domain::ValidationError>(())
    /// ```
    #[must_use]
    pub fn municipio_ibge(&self) -> Option<u32> {
        if self.is_sandbox() {
            return None;
        }
        self.0.get(3..10)?.parse().ok()
    }

    /// The 32-character hash in the dotted form of the official receipt (8 groups of 4).
    #[must_use]
    pub fn hash_pontuado(&self) -> String {
        let hash = &self.0[11..];
        hash.as_bytes()
            .chunks(4)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join(".")
    }

    /// True for the contract's reserved sandbox codes.
    #[must_use]
    pub fn is_sandbox(&self) -> bool {
        sandbox::is_codigo_car(&self.0)
    }
}

fn is_valid_shape(code: &str) -> bool {
    let b = code.as_bytes();
    if b.len() != 2 + 1 + 7 + 1 + 32 || b[2] != b'-' || b[10] != b'-' {
        return false;
    }
    let sigla = &code[..2];
    let ibge = &code[3..10];
    let hash = &code[11..];
    if !ibge.bytes().all(|c| c.is_ascii_digit())
        || !hash.bytes().all(|c| matches!(c, b'0'..=b'9' | b'A'..=b'F'))
    {
        return false;
    }
    match (uf::codigo_ibge(sigla), ibge[..2].parse::<u8>()) {
        (Some(expected), Ok(prefix)) => expected == prefix,
        _ => false,
    }
}

impl FromStr for CodigoCar {
    type Err = ValidationError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl TryFrom<&str> for CodigoCar {
    type Error = ValidationError;
    fn try_from(s: &str) -> Result<Self, Self::Error> {
        Self::parse(s)
    }
}

impl AsRef<str> for CodigoCar {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CodigoCar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for CodigoCar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodigoCar({})", self.0)
    }
}

impl serde::Serialize for CodigoCar {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for CodigoCar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_real_codes() {
        for c in [
            "DF-5300108-CCD63AE5A8A04271941A8A4CD8829672",
            "MT-5107925-7515B28AEE9240ACAB464D8DF624D470",
            "SC-4210100-EA1F3824FC3D4148B83F921E253C6DCD",
            "MT-5103379-664319C3BF5E4B5AB284067A6AE146B0",
        ] {
            assert_eq!(CodigoCar::parse(c).unwrap().as_str(), c);
        }
    }

    #[test]
    fn normalises_dots_spaces_and_case() {
        let c = CodigoCar::parse(" pi-2200053-1bab.c06a.e224.43bc.a804.ffec.51c2.5eb9 ").unwrap();
        assert_eq!(c.as_str(), "PI-2200053-1BABC06AE22443BCA804FFEC51C25EB9");
        assert_eq!(c.hash_pontuado(), "1BAB.C06A.E224.43BC.A804.FFEC.51C2.5EB9");
        assert_eq!(c.municipio_ibge(), Some(2200053));
    }

    #[test]
    fn sandbox_codes_pass_before_shape() {
        for c in sandbox::CODIGOS_CAR {
            let parsed = CodigoCar::parse(c.to_lowercase()).unwrap();
            assert!(parsed.is_sandbox());
            assert_eq!(parsed.municipio_ibge(), None, "{c}: no municipality");
        }
    }

    #[test]
    fn rejects_malformed() {
        for c in [
            "",
            "DF-5300108-CCD63AE5A8A04271941A8A4CD882967", // 31 hex
            "DF-5300108-CCD63AE5A8A04271941A8A4CD88296720", // 33 hex
            "DF-5300108-GCD63AE5A8A04271941A8A4CD8829672", // not hex
            "XX-5300108-CCD63AE5A8A04271941A8A4CD8829672", // unknown UF
            "MT-5300108-CCD63AE5A8A04271941A8A4CD8829672", // UF does not match IBGE prefix
            "DF5300108CCD63AE5A8A04271941A8A4CD8829672",
            "DF-530010-8CCD63AE5A8A04271941A8A4CD8829672",
        ] {
            assert!(CodigoCar::parse(c).is_err(), "{c} should be rejected");
        }
    }
}
