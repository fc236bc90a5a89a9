//! Money typed by people: the one parser of an amount in reais that the CLI (`limites definir
//! --mensal`, `recarga criar VALOR`, `recarga faixas --valor`, `lote --max-custo`) and the
//! server's command line (`conta criar --saldo`) read (docs/dominio.md, "Numbers, dates, time
//! zone").
//!
//! Money input never guesses. Brazilian notation is the norm (`1.500,00`: dot for thousands,
//! comma for decimals); a bare decimal point with one or two digits (`2.50`) is accepted too,
//! since it cannot mean thousands. What could mean two amounts 1,000x apart is refused:
//!
//! | input | reais | why |
//! |---|---|---|
//! | `1500`, `1500,00`, `1.500,00`, `R$ 1.500,00` | 1500 | |
//! | `2,5`, `2.50` | 2,50 | one or two digits after the separator are centavos |
//! | `1.500.000` | 1500000 | more than one dot can only group thousands |
//! | `1.500`, `1,500`, `2,505` | refused | thousands in one notation, reais and centavos in the other |
//! | `1.5,00`, `,50`, `1.5000` | refused | not an amount in reais (centavos have two digits) |
//!
//! Negative amounts are refused; so are amounts over 13 integer digits (`MAX_DIGITS`).

use rust_decimal::Decimal;

/// The most integer digits an amount may have (R$ 9.999.999.999.999,99).
const MAX_DIGITS: usize = 13;

/// The forms the CLI accepts, shown in every error.
const ACCEPTED_FORMS: &str = "1500, 1500,00, 1.500,00, R$ 1.500,00, 2,5 ou 2.50";

/// Why a text is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValorError {
    /// Nothing typed.
    #[error("valor vazio; formas aceitas: {ACCEPTED_FORMS}")]
    Empty,
    /// Could be read as two amounts 1,000x apart (`1.500`, `12,345`): the message gives both
    /// readings of this input and how to write each.
    #[error("{}", ambiguous_message(.0))]
    Ambiguous(String),
    /// More than two decimal places (`0,001`, `2,5000`): reais have centavos only.
    #[error("valor com {1} casas decimais: {0:?}; reais têm no máximo 2 (os centavos), como 12,34")]
    TooManyDecimals(String, usize),
    /// Below zero.
    #[error("valor negativo: {0:?}; o valor deve ser zero ou positivo")]
    Negative(String),
    /// More than 13 integer digits.
    #[error("valor grande demais: {0:?}")]
    TooLarge(String),
    /// Anything else.
    #[error("valor inválido: {0:?}; formas aceitas: {ACCEPTED_FORMS}")]
    Invalid(String),
}

/// Parses an amount in reais typed by a person (see the module documentation for the forms).
///
/// Pure: no locale, no environment. The result has at most two decimal places.
///
/// # Errors
/// [`ValorError`] when the text is empty, negative, ambiguous, too large or not an amount.
pub fn parse_reais(input: &str) -> Result<Decimal, ValorError> {
    let compact: String = input.chars().filter(|c| !c.is_whitespace()).collect();
    let without_currency = compact
        .strip_prefix("R$")
        .or_else(|| compact.strip_prefix("r$"))
        .unwrap_or(&compact);
    if without_currency.is_empty() {
        return Err(ValorError::Empty);
    }
    if let Some(rest) = without_currency.strip_prefix('-') {
        return match parse_reais(rest) {
            Ok(v) if v.is_zero() => Ok(v),
            Ok(_) => Err(ValorError::Negative(input.to_owned())),
            Err(e) => Err(e),
        };
    }
    let invalid = || ValorError::Invalid(input.to_owned());
    if !without_currency
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    {
        return Err(invalid());
    }
    if let Some(places) = excess_decimal_places(without_currency) {
        return Err(ValorError::TooManyDecimals(input.to_owned(), places));
    }
    let (integer, centavos) = split_amount(without_currency).map_err(|ambiguous| {
        if ambiguous {
            ValorError::Ambiguous(input.to_owned())
        } else {
            invalid()
        }
    })?;
    let digits = integer.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return Err(ValorError::TooLarge(input.to_owned()));
    }
    let text = format!(
        "{}.{centavos:0<2}",
        if integer.is_empty() { "0" } else { &integer }
    );
    text.parse::<Decimal>().map_err(|_| invalid())
}

/// The two readings of an ambiguous input (`1.500`: 1500 with a thousands dot, or 1,5 with an
/// English decimal point), and how to write each unambiguously.
fn ambiguous_message(input: &str) -> String {
    let text = input.trim();
    let sep = if text.contains(',') { ',' } else { '.' };
    let (int, dec) = text.rsplit_once(sep).unwrap_or((text, ""));
    let int = int.trim_start_matches("R$").trim();
    let thousands = format!("{int}{dec}");
    let grouped = format!("{int}.{dec},00");
    if sep == ',' {
        format!(
            "valor ambíguo: {input:?}: com a vírgula separando milhares (como em inglês) seria {thousands}, \
             mas no Brasil a vírgula separa os centavos, que têm 2 casas; escreva {thousands} ou {grouped}"
        )
    } else {
        let dec2 = format!("{int},{:0<2}", dec.trim_end_matches('0'));
        format!(
            "valor ambíguo: {input:?} pode ser {thousands} (ponto de milhar) ou {dec2} (ponto decimal, como em \
             inglês); escreva {thousands} ou {grouped} para o primeiro, {dec2} para o segundo"
        )
    }
}

/// Splits into (integer digits, decimal digits). `Err(true)` when ambiguous, `Err(false)` when
/// malformed.
fn split_amount(s: &str) -> Result<(String, &str), bool> {
    let commas = s.matches(',').count();
    let dots = s.matches('.').count();
    match (commas, dots) {
        (0, 0) => Ok((s.to_owned(), "")),
        (1, _) => {
            let (int, dec) = s.split_once(',').expect("one comma");
            if dec.len() == 3 && dots == 0 && !dec.is_empty() && !int.is_empty() {
                return Err(true); // 1,500
            }
            if dec.is_empty() || dec.len() > 2 || dec.contains('.') {
                return Err(false);
            }
            Ok((ungroup_thousands(int).ok_or(false)?, dec))
        }
        (0, 1) => {
            let (int, dec) = s.split_once('.').expect("one dot");
            match dec.len() {
                1 | 2 if !int.is_empty() => Ok((int.to_owned(), dec)),
                3 if !int.is_empty() && int.len() <= 3 => Err(true), // 1.500
                _ => Err(false),
            }
        }
        (0, _) => Ok((ungroup_thousands(s).ok_or(false)?, "")), // 1.500.000
        _ => Err(false),
    }
}

/// The decimal places of an amount that has more than two and cannot be a thousands group:
/// after the one comma (`0,001`, `2,5000`; `12,345` is ambiguous instead), or after the one dot
/// when not three digits (`2.5000`) or when the integer part is zero (`0.001`).
fn excess_decimal_places(s: &str) -> Option<usize> {
    let (commas, dots) = (s.matches(',').count(), s.matches('.').count());
    let (int, dec) = match (commas, dots) {
        (1, _) => s.split_once(',')?,
        (0, 1) => s.split_once('.')?,
        _ => return None,
    };
    if dec.len() <= 2 || !dec.chars().all(|c| c.is_ascii_digit()) || int.is_empty() {
        return None;
    }
    let maybe_group = dec.len() == 3 && !int.trim_start_matches('0').is_empty();
    (!maybe_group).then_some(dec.len())
}

/// Digits grouped with dots (`1.500.000`) or plain digits, as plain digits.
fn ungroup_thousands(s: &str) -> Option<String> {
    if s.is_empty() {
        return None;
    }
    if !s.contains('.') {
        return Some(s.to_owned());
    }
    let groups: Vec<&str> = s.split('.').collect();
    let first_ok = (1..=3).contains(&groups[0].len());
    let rest_ok = groups[1..].iter().all(|g| g.len() == 3);
    (first_ok && rest_ok).then(|| groups.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn accepted_forms() {
        for (input, reais) in [
            ("1500", "1500"),
            ("1500,00", "1500"),
            ("1.500,00", "1500"),
            ("R$ 1.500,00", "1500"),
            ("r$1500", "1500"),
            ("2,5", "2.5"),
            ("2.50", "2.5"),
            ("2.5", "2.5"),
            ("0,01", "0.01"),
            ("1.500.000", "1500000"),
            ("1.500.000,99", "1500000.99"),
            (" 500 ", "500"),
            ("R$\u{a0}750,5", "750.5"),
            ("-0", "0"),
        ] {
            assert_eq!(parse_reais(input), Ok(v(reais)), "{input}");
        }
    }

    #[test]
    fn ambiguous_forms_are_refused_with_the_accepted_forms() {
        for (input, thousands) in [
            ("1.500", "1.500,00"),
            ("1,500", "1.500,00"),
            ("10.000", "10.000,00"),
            ("999.999", "999.999,00"),
            ("12,345", "12.345,00"),
        ] {
            let e = parse_reais(input).unwrap_err();
            assert!(matches!(e, ValorError::Ambiguous(_)), "{input}: {e:?}");
            assert!(e.to_string().contains(thousands), "{e}");
            assert!(!e.to_string().contains("mil e quinhentos"), "{e}");
        }
    }

    #[test]
    fn each_error_names_what_is_wrong_with_this_input() {
        for (input, places) in [("0,001", 3), ("2,5000", 4), ("0.001", 3), ("1.5000", 4)] {
            let e = parse_reais(input).unwrap_err();
            assert_eq!(
                e,
                ValorError::TooManyDecimals(input.into(), places),
                "{input}"
            );
            assert!(
                e.to_string().contains(&format!("{places} casas decimais")),
                "{e}"
            );
        }
        let e = parse_reais("-5").unwrap_err();
        assert!(e.to_string().starts_with("valor negativo: \"-5\""), "{e}");
    }

    #[test]
    fn malformed_forms_are_refused() {
        for input in [
            "",
            "R$",
            "abc",
            ",50",
            "1,2,3",
            "2,505",
            "1.50.0",
            "1.5,00",
            "12.34.56",
            "1e3",
            "1.",
            ".5",
            "1,",
            "1.5000",
            "1 000,00x",
            "1234.500",
            "1,500.00",
        ] {
            assert!(parse_reais(input).is_err(), "{input:?}");
        }
        assert!(matches!(parse_reais("-10"), Err(ValorError::Negative(_))));
        assert!(matches!(
            parse_reais("99999999999999"),
            Err(ValorError::TooLarge(_))
        ));
        assert_eq!(parse_reais("9999999999999,99"), Ok(v("9999999999999.99")));
    }
}
