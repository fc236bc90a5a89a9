use super::ValidationError;
use crate::sandbox;

/// Which document a [`CpfCnpj`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentoKind {
    /// Cadastro de Pessoas Físicas: 11 digits, two mod-11 check digits.
    Cpf,
    /// Cadastro Nacional da Pessoa Jurídica: 12 characters in `[0-9A-Z]` (alphanumeric since
    /// July 2026, IN RFB 2.229/2024) and two numeric mod-11 check digits.
    Cnpj,
}

/// An owner document, CPF or CNPJ (alphanumeric CNPJ included), normalised to its bare
/// characters and verified with the Receita Federal's mod-11 check digits (docs/dominio.md "CPF",
/// "CNPJ").
///
/// Parsing accepts masked or bare input (`529.982.247-25`, `12.ABC.345/01DE-35`), drops `.`, `/`,
/// `-` and white space and upper-cases. Documents made of one repeated character pass mod-11 but
/// are refused by rule, except the contract's [`sandbox`] documents, which always pass, masked
/// (`000.000.000-00`) or bare.
///
/// `Display` writes the whole bare document (what is sent); `Debug` masks it
/// (`CpfCnpj(***.982.247-**)`), as the SDK's error texts do, so a document never reaches a log
/// through `{:?}`.
///
/// ```
/// use carapi_sdk::{CpfCnpj, domain::DocumentoKind};
/// let d: CpfCnpj = "12.abc.345/01de-35".parse()?;
/// assert_eq!(d.as_str(), "12ABC34501DE35");
/// assert_eq!(d.kind(), DocumentoKind::Cnpj);
/// assert_eq!(d.formatted(), "12.ABC.345/01DE-35");
/// # Ok::<(), carapi_sdk::domain::ValidationError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpfCnpj(String);

impl CpfCnpj {
    /// Normalises and validates `input`.
    ///
    /// # Errors
    /// [`ValidationError::CpfCnpj`] when the bare form is not an 11-digit CPF or a 14-character
    /// CNPJ with correct check digits, or is a repeated-character document.
    pub fn parse(input: impl AsRef<str>) -> Result<Self, ValidationError> {
        let raw = input.as_ref();
        let bare: String = raw
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '.' | '/' | '-'))
            .map(|c| c.to_ascii_uppercase())
            .collect();
        // Reserved values are recognised after normalisation: the contract takes documents
        // "with or without mask" (contract, "Lookups"), so `000.000.000-00` is the sandbox
        // `00000000000`.
        if sandbox::is_documento(&bare) || is_valid(&bare) {
            Ok(Self(bare))
        } else {
            Err(ValidationError::CpfCnpj(raw.to_owned()))
        }
    }

    /// The bare document (digits, or digits and upper-case letters for a CNPJ).
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// CPF or CNPJ, by length.
    #[must_use]
    pub fn kind(&self) -> DocumentoKind {
        if self.0.len() == 11 {
            DocumentoKind::Cpf
        } else {
            DocumentoKind::Cnpj
        }
    }

    /// The document with its usual mask: `529.982.247-25` or `12.ABC.345/01DE-35`.
    #[must_use]
    pub fn formatted(&self) -> String {
        let s = &self.0;
        match self.kind() {
            DocumentoKind::Cpf => format!("{}.{}.{}-{}", &s[..3], &s[3..6], &s[6..9], &s[9..]),
            DocumentoKind::Cnpj => {
                format!(
                    "{}.{}.{}/{}-{}",
                    &s[..2],
                    &s[2..5],
                    &s[5..8],
                    &s[8..12],
                    &s[12..]
                )
            }
        }
    }

    /// True for the contract's reserved sandbox documents.
    #[must_use]
    pub fn is_sandbox(&self) -> bool {
        sandbox::is_documento(&self.0)
    }
}

/// Mod-11 check digit over the characters `chars` with `weights` (Receita Federal rule: a
/// character's value is its ASCII code minus 48, so '0'..'9' = 0..9 and 'A'..'Z' = 17..42;
/// `r = sum % 11; dv = if r < 2 { 0 } else { 11 - r }`).
fn dv(chars: &[u8], weights: &[u32]) -> u32 {
    let sum: u32 = chars
        .iter()
        .zip(weights)
        .map(|(c, w)| u32::from(c - b'0') * w)
        .sum();
    let r = sum % 11;
    if r < 2 { 0 } else { 11 - r }
}

fn is_valid(bare: &str) -> bool {
    let b = bare.as_bytes();
    if b.is_empty() || b.iter().all(|&c| c == b[0]) {
        return false;
    }
    match b.len() {
        11 if b.iter().all(u8::is_ascii_digit) => {
            let dv1 = dv(&b[..9], &[10, 9, 8, 7, 6, 5, 4, 3, 2]);
            let dv2 = dv(&b[..10], &[11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
            u32::from(b[9] - b'0') == dv1 && u32::from(b[10] - b'0') == dv2
        }
        14 if b[..12]
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
            && b[12..].iter().all(u8::is_ascii_digit) =>
        {
            let dv1 = dv(&b[..12], &[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
            let dv2 = dv(&b[..13], &[6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
            u32::from(b[12] - b'0') == dv1 && u32::from(b[13] - b'0') == dv2
        }
        _ => false,
    }
}

/// Computes the two check digits for a CPF base (9 digits) or CNPJ base (12 characters in
/// `[0-9A-Z]`) and returns the full bare document; `None` when the base has another shape.
///
/// Used to synthesise valid fictitious owners in reference data.
pub fn complete_check_digits(base: &str) -> Option<String> {
    let b = base.as_bytes();
    let (w1, w2): (&[u32], &[u32]) = match b.len() {
        9 if b.iter().all(u8::is_ascii_digit) => (
            &[10, 9, 8, 7, 6, 5, 4, 3, 2],
            &[11, 10, 9, 8, 7, 6, 5, 4, 3, 2],
        ),
        12 if b
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) =>
        {
            (
                &[5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
                &[6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
            )
        }
        _ => return None,
    };
    let mut s = String::with_capacity(b.len() + 2);
    s.push_str(base);
    let d1 = dv(b, w1);
    s.push(char::from(b'0' + d1 as u8));
    let d2 = dv(s.as_bytes(), w2);
    s.push(char::from(b'0' + d2 as u8));
    Some(s)
}

impl CpfCnpj {
    /// See [`complete_check_digits`]: builds a valid document from its base.
    #[must_use]
    pub fn from_base(base: &str) -> Option<Self> {
        complete_check_digits(base).and_then(|s| Self::parse(s).ok())
    }
}

// `Debug` masked as error texts are (`CpfCnpj(***.982.247-**)`): a document in a `{:?}` of a
// struct that holds it must not reach a log.
super::validated_string!(CpfCnpj, masked);

/// A bare document as error texts show it: `***.982.247-**`, `**.345.678/****-**` (the letters
/// of an alphanumeric CNPJ masked too).
fn masked(bare: &str) -> String {
    let middle = |r: std::ops::Range<usize>| -> String {
        bare.get(r)
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_digit() { c } else { '*' })
            .collect()
    };
    if bare.len() == 11 {
        format!("***.{}.{}-**", middle(3..6), middle(6..9))
    } else {
        format!("**.{}.{}/****-**", middle(2..5), middle(5..8))
    }
}

/// Why `raw` is not a valid document, in the words of [`ValidationError::CpfCnpj`]'s text: the
/// check digit does not match (the shape of a CPF or CNPJ, mod-11 fails), every character is
/// the same, or the length is neither.
pub(super) fn reason(raw: &str) -> &'static str {
    let bare: String = raw
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '.' | '/' | '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let b = bare.as_bytes();
    let cpf_shape = b.len() == 11 && b.iter().all(u8::is_ascii_digit);
    let cnpj_shape = b.len() == 14
        && b[..12]
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && b[12..].iter().all(u8::is_ascii_digit);
    if !(cpf_shape || cnpj_shape) {
        "um CPF tem 11 dígitos e um CNPJ 14 caracteres"
    } else if b.iter().all(|&c| c == b[0]) {
        "todos os caracteres são iguais"
    } else {
        "dígito verificador não confere"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_vectors_valid() {
        for d in [
            "385.211.390-39",
            "38521139039",
            "529.982.247-25",
            "111.444.777-35",
            "123.456.789-09",
            "000.000.001-91",
            "11.222.333/0001-81",
            "11222333000181",
            "00.000.000/0001-91",
            "12.ABC.345/01DE-35",
            "12ABC34501DE35",
            "SY.99M.4WL/0001-22",
            "SY.99M.4WL/1G7A-66",
            "4B.7BJ.E7D/0001-45",
        ] {
            assert!(CpfCnpj::parse(d).is_ok(), "{d} should be valid");
        }
    }

    #[test]
    fn domain_vectors_invalid() {
        for d in [
            "529.982.247-24",
            "123.456.789-00",
            "1234567890",
            "11.222.333/0001-82",
            "12.ABC.345/01DE-36",
            "12ABC34501DE99",
            "12ABC34501DEAB",
            "12.AB@.345/01DE-35",
            "22222222222",
            "99999999999999",
            "",
        ] {
            assert!(CpfCnpj::parse(d).is_err(), "{d} should be invalid");
        }
    }

    #[test]
    fn sandbox_documents_pass() {
        for d in sandbox::DOCUMENTOS {
            assert!(CpfCnpj::parse(d).unwrap().is_sandbox());
        }
    }

    #[test]
    fn masked_sandbox_documents_are_normalised_and_recognised() {
        // The contract takes documents "with or without mask" (contract, "Lookups").
        for (masked, bare) in [
            ("000.000.000-00", sandbox::CPF_DOIS_CARS),
            ("00.000.000/0000-00", sandbox::CNPJ_TRUNCADO),
            ("111.111.111-11", sandbox::CPF_NAO_ENCONTRADO),
            (" 000 000 000 00 ", sandbox::CPF_DOIS_CARS),
        ] {
            let d = CpfCnpj::parse(masked).unwrap_or_else(|e| panic!("{masked}: {e}"));
            assert_eq!(d.as_str(), bare);
            assert!(d.is_sandbox(), "{masked}");
            assert!(sandbox::is_documento(masked), "{masked}");
        }
        assert_eq!(
            CpfCnpj::parse(sandbox::CPF_DOIS_CARS).unwrap().formatted(),
            "000.000.000-00"
        );
        assert!(!sandbox::is_documento("222.222.222-22"));
        assert!(CpfCnpj::parse("222.222.222-22").is_err());
    }

    #[test]
    fn masks_and_lowercase() {
        let d = CpfCnpj::parse("sy.99m.4wl/1g7a-66").unwrap();
        assert_eq!(d.as_str(), "SY99M4WL1G7A66");
        assert_eq!(d.formatted(), "SY.99M.4WL/1G7A-66");
        assert_eq!(
            CpfCnpj::parse("52998224725").unwrap().formatted(),
            "529.982.247-25"
        );
    }

    #[test]
    fn debug_is_masked_and_display_is_the_document() {
        let d = CpfCnpj::parse("529.982.247-25").unwrap();
        assert_eq!(format!("{d:?}"), "CpfCnpj(***.982.247-**)");
        assert_eq!(d.to_string(), "52998224725");
        let j = CpfCnpj::parse("12.ABC.345/01DE-35").unwrap();
        assert_eq!(format!("{j:?}"), "CpfCnpj(**.***.345/****-**)");
        assert_eq!(
            format!("{:?}", Some(d)),
            "Some(CpfCnpj(***.982.247-**))",
            "inside another Debug"
        );
    }

    #[test]
    fn the_error_says_why_a_document_is_refused() {
        let dv = CpfCnpj::parse("529.982.247-24").unwrap_err().to_string();
        assert_eq!(
            dv,
            "CPF/CNPJ inválido: \"***.982.247-**\": dígito verificador não confere"
        );
        let cnpj = CpfCnpj::parse("12.ABC.345/01DE-36")
            .unwrap_err()
            .to_string();
        assert!(cnpj.ends_with("dígito verificador não confere"), "{cnpj}");
        assert!(
            CpfCnpj::parse("1234567890")
                .unwrap_err()
                .to_string()
                .ends_with("um CPF tem 11 dígitos e um CNPJ 14 caracteres")
        );
        assert!(
            CpfCnpj::parse("222.222.222-22")
                .unwrap_err()
                .to_string()
                .ends_with("todos os caracteres são iguais")
        );
    }

    #[test]
    fn completes_check_digits() {
        assert_eq!(
            complete_check_digits("529982247").as_deref(),
            Some("52998224725")
        );
        assert_eq!(
            complete_check_digits("12ABC34501DE").as_deref(),
            Some("12ABC34501DE35")
        );
        assert_eq!(complete_check_digits("12AB"), None);
    }
}
