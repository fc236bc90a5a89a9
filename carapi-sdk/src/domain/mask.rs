//! Personal data kept out of error texts (LGPD; docs/contrato.md "What the service does": the
//! client is the data controller of what it looks up): CPF and CNPJ masked as
//! `***.456.789-**` / `**.345.678/****-**`, and a value given by the user that is not a CAR
//! code shown without its letters (it may be a name).

use std::borrow::Cow;

use super::CpfCnpj;

/// `text` with every CPF (11 digits) and CNPJ (14 digits, or an alphanumeric CNPJ with valid
/// check digits) masked, punctuated or bare. A run of digits glued to letters (inside a CAR
/// code's hash) is left alone.
#[must_use]
pub(crate) fn documentos(text: &str) -> Cow<'_, str> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut k = 0;
    while k < chars.len() {
        if let Some((end, mask)) = document_at(&chars, k) {
            out.push_str(&mask);
            changed = true;
            k = end;
        } else {
            out.push(chars[k]);
            k += 1;
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

fn is_separator(c: char) -> bool {
    matches!(c, '.' | '-' | '/')
}

/// A document starting at `k` (not glued to a letter or digit before it): where it ends and
/// its mask.
fn document_at(chars: &[char], k: usize) -> Option<(usize, String)> {
    if !chars[k].is_ascii_alphanumeric() || (k > 0 && chars[k - 1].is_ascii_alphanumeric()) {
        return None;
    }
    let mut end = k;
    while end < chars.len() && (chars[end].is_ascii_alphanumeric() || is_separator(chars[end])) {
        end += 1;
    }
    while end > k && is_separator(chars[end - 1]) {
        end -= 1;
    }
    let token: String = chars[k..end].iter().collect();
    let bare: String = token.chars().filter(|c| !is_separator(*c)).collect();
    let digits_only = bare.chars().all(|c| c.is_ascii_digit());
    let mask = match bare.len() {
        11 if digits_only => format!("***.{}.{}-**", &bare[3..6], &bare[6..9]),
        14 if digits_only || CpfCnpj::parse(&bare).is_ok() => {
            format!("**.{}.{}/****-**", &bare[2..5], &bare[5..8])
        }
        _ => return None,
    };
    Some((end, mask))
}

/// A value given by the user, for an error text: a CAR-code-like value as given (two letters,
/// then the digits of a municipality after a dash, an en/em dash or a space, or right away;
/// letters, digits, `.`, dashes and spaces only: `DF-123`, `DF 5300108 B69B…`), documents
/// masked; anything else with its letters masked too (`Fulano de Tal` becomes
/// `****** ** ***`).
#[must_use]
pub(crate) fn input(value: &str) -> String {
    let without_documents = documentos(value);
    if looks_like_car(value) {
        return without_documents.into_owned();
    }
    without_documents
        .chars()
        .map(|c| if c.is_alphabetic() { '*' } else { c })
        .collect()
}

/// True when `value` reads as a CAR code a person typed or pasted (see [`input`]): never a
/// name, which has no digit right after its first two letters.
fn looks_like_car(value: &str) -> bool {
    let separator = |c: char| c.is_whitespace() || matches!(c, '-' | '\u{2013}' | '\u{2014}');
    let v = value.trim();
    let mut chars = v.chars();
    let uf = chars
        .by_ref()
        .take(2)
        .filter(char::is_ascii_alphabetic)
        .count()
        == 2;
    let digit_next = chars
        .find(|c| !separator(*c))
        .is_some_and(|c| c.is_ascii_digit());
    uf && digit_next
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || separator(c))
}

/// A message of serde_json, for an error text: the values it quotes from the body (`"..."`,
/// and the variant of `unknown variant `...``) masked, documents too.
#[must_use]
pub(crate) fn serde(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quoted = false;
    for c in message.chars() {
        match c {
            '"' => {
                if quoted {
                    out.push_str("***");
                }
                quoted = !quoted;
                out.push(c);
            }
            _ if quoted => {}
            _ => out.push(c),
        }
    }
    if let Some(start) = out.find("unknown variant `") {
        let start = start + "unknown variant `".len();
        if let Some(end) = out[start..].find('`') {
            out.replace_range(start..start + end, "***");
        }
    }
    documentos(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpfs_and_cnpjs_are_masked_wherever_they_are() {
        assert_eq!(
            documentos("código CAR inválido: \"123.456.789-00\""),
            "código CAR inválido: \"***.456.789-**\""
        );
        assert_eq!(
            documentos("/v1/proprietario/52998224725 sem CARs"),
            "/v1/proprietario/***.982.247-** sem CARs"
        );
        assert_eq!(
            documentos("CNPJ 12.345.678/0001-95."),
            "CNPJ **.345.678/****-**."
        );
        assert_eq!(documentos("12ABC34501DE35"), "**.ABC.345/****-**");
        let car = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47 e 2026-11-21 R$ 1.234,56";
        assert_eq!(documentos(car), car, "CAR codes, dates and amounts stay");
        assert_eq!(
            documentos("A1234567890123B"),
            "A1234567890123B",
            "glued to letters"
        );
    }

    #[test]
    fn a_value_that_is_not_a_car_code_loses_its_letters() {
        assert_eq!(input("Fulano de Tal"), "****** ** ***");
        assert_eq!(input("DF-123"), "DF-123");
        assert_eq!(
            input("DF\u{2013}5300108 B69B317DD02C"),
            "DF\u{2013}5300108 B69B317DD02C"
        );
        assert_eq!(input("Ana 12"), "*** 12");
        assert_eq!(input("529.982.247-25"), "***.982.247-**");
        assert_eq!(input("João 529.982.247-25"), "**** ***.982.247-**");
    }

    #[test]
    fn serde_messages_lose_the_values_they_quote() {
        assert_eq!(
            serde("invalid type: string \"Fulano de Tal\", expected u32"),
            "invalid type: string \"***\", expected u32"
        );
        assert_eq!(
            serde("unknown variant `Beltrana`, expected one of `Pendente`, `Confirmado`"),
            "unknown variant `***`, expected one of `Pendente`, `Confirmado`"
        );
        assert_eq!(serde("missing field `dados`"), "missing field `dados`");
    }
}
