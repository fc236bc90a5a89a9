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

    /// [`parse`](Self::parse), also reading the forms a CAR code takes when a person pastes it
    /// from a PDF, a spreadsheet or a word processor: spaces, or en/em dashes (`–`, `—`), in the
    /// two dash positions (`DF 5300108 B69B…`, `DF–5300108–B69B…`), and a code without dashes
    /// when the whole string is exactly the UF, the 7 digits and the 32 hexadecimal characters
    /// (`DF5300108B69B…`). A dash in another position is never moved: moving it could make a
    /// different valid code, so such input is refused. For the input layers of the CLI and the
    /// Python package only; the API's own rule (400 `CODIGO_CAR_INVALIDO`, docs/contrato.md)
    /// is [`parse`](Self::parse).
    ///
    /// ```
    /// use carapi_sdk::CodigoCar;
    /// let c = CodigoCar::parse_pasted("DF – 5300108 – B69B317DD02C43DAA77A0784AEEF7D47")?;
    /// assert_eq!(c.as_str(), "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47");
    /// assert_eq!(CodigoCar::parse_pasted("DF5300108B69B317DD02C43DAA77A0784AEEF7D47")?, c);
    /// assert!(CodigoCar::parse_pasted("DF-530010-8B69B317DD02C43DAA77A0784AEEF7D47").is_err());
    /// # Ok::<(), carapi_sdk::domain::ValidationError>(())
    /// ```
    ///
    /// # Errors
    /// [`ValidationError::CodigoCar`] (with `input` as typed) when no reading above gives a code
    /// [`parse`](Self::parse) accepts.
    pub fn parse_pasted(input: impl AsRef<str>) -> Result<Self, ValidationError> {
        let raw = input.as_ref();
        if let Ok(c) = Self::parse(raw) {
            return Ok(c);
        }
        let refused = || ValidationError::CodigoCar(raw.to_owned());
        let dash = |c: char| matches!(c, '-' | '\u{2013}' | '\u{2014}');
        let text: String = raw.chars().filter(|c| *c != '.').collect();
        let joined = if text.chars().any(dash) {
            // Dashes (or spaces) split it into exactly UF, municipality and hash.
            let parts: Vec<&str> = text
                .split(|c: char| c.is_whitespace() || dash(c))
                .filter(|p| !p.is_empty())
                .collect();
            match parts.as_slice() {
                [uf, ibge, hash] if uf.len() == 2 && ibge.len() == 7 && hash.len() == 32 => {
                    format!("{uf}-{ibge}-{hash}")
                }
                _ => return Err(refused()),
            }
        } else {
            // No dash at all: exactly UF + 7 digits + 32 hexadecimal characters, once the
            // spaces are gone (their positions cannot change what the characters say).
            let bare: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            if bare.len() != 41 || !bare.is_ascii() {
                return Err(refused());
            }
            format!("{}-{}-{}", &bare[..2], &bare[2..9], &bare[9..])
        };
        Self::parse(joined).map_err(|_| refused())
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
    pub fn hash_dotted(&self) -> String {
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

super::validated_string!(CodigoCar, str::to_owned);

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
        assert_eq!(c.hash_dotted(), "1BAB.C06A.E224.43BC.A804.FFEC.51C2.5EB9");
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

    #[test]
    fn pasted_forms_are_read_and_a_misplaced_dash_is_never_moved() {
        let code = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
        for pasted in [
            "DF 5300108 B69B317DD02C43DAA77A0784AEEF7D47",
            "DF5300108B69B317DD02C43DAA77A0784AEEF7D47",
            "df5300108b69b317dd02c43daa77a0784aeef7d47",
            "DF\u{2013}5300108\u{2013}B69B317DD02C43DAA77A0784AEEF7D47",
            "DF \u{2014} 5300108 \u{2014} B69B.317D.D02C.43DA.A77A.0784.AEEF.7D47",
            "DF-5300108 B69B317DD02C43DAA77A0784AEEF7D47",
            " DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47\n",
        ] {
            let c = CodigoCar::parse_pasted(pasted).unwrap_or_else(|e| panic!("{pasted}: {e}"));
            assert_eq!(c.as_str(), code, "{pasted}");
        }
        for refused in [
            "DF-530010-8B69B317DD02C43DAA77A0784AEEF7D47",
            "DF-53001088-B69B317DD02C43DAA77A0784AEEF7D4",
            "DF5-300108-B69B317DD02C43DAA77A0784AEEF7D47",
            "DF\u{2013}5300108B69B317DD02C43DAA77A0784AEEF7D47",
            "DF5300108B69B317DD02C43DAA77A0784AEEF7D4",
            "DF5300108B69B317DD02C43DAA77A0784AEEF7D477",
            "MT5300108B69B317DD02C43DAA77A0784AEEF7D47",
        ] {
            let e = CodigoCar::parse_pasted(refused).unwrap_err();
            assert_eq!(e, ValidationError::CodigoCar(refused.to_owned()));
        }
        // The API's rule stays the contract's.
        assert!(CodigoCar::parse("DF 5300108 B69B317DD02C43DAA77A0784AEEF7D47").is_err());
        assert!(CodigoCar::parse("DF5300108B69B317DD02C43DAA77A0784AEEF7D47").is_err());
    }

    #[test]
    fn a_refused_car_code_is_echoed_as_typed() {
        let typed = "DF\u{2013}5300108 B69B317DD02C43DAA77A0784AEEF7D4";
        let e = CodigoCar::parse_pasted(typed).unwrap_err();
        assert!(e.to_string().contains(typed), "{e}");
        assert!(format!("{e:?}").contains(typed), "{e:?}");
    }
}
