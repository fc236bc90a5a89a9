//! The one parser for every amount of money the CLI reads (`limites set --mensal`,
//! `recarga criar VALOR`, `recarga faixas --valor`, `lote --max-custo`).
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
//! Negative amounts are refused; so are amounts over [`MAXIMO_DIGITOS`] integer digits.

use rust_decimal::Decimal;

/// The most integer digits an amount may have (R$ 9.999.999.999.999,99).
pub const MAXIMO_DIGITOS: usize = 13;

/// The forms the CLI accepts, shown in every error.
pub const FORMAS_ACEITAS: &str = "1500, 1500,00, 1.500,00, R$ 1.500,00, 2,5 ou 2.50";

/// Why a text is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErroValor {
    /// Nothing typed.
    #[error("valor vazio; formas aceitas: {FORMAS_ACEITAS}")]
    Vazio,
    /// Could be read two ways (`1.500`, `1,500`).
    #[error(
        "valor ambíguo: {0:?} pode ser mil e quinhentos ou um e cinquenta; escreva os centavos (1.500,00) ou sem separador (1500); formas aceitas: {FORMAS_ACEITAS}"
    )]
    Ambiguo(String),
    /// Below zero.
    #[error("valor negativo: {0:?}; formas aceitas: {FORMAS_ACEITAS}")]
    Negativo(String),
    /// More than [`MAXIMO_DIGITOS`] integer digits.
    #[error("valor grande demais: {0:?}")]
    GrandeDemais(String),
    /// Anything else.
    #[error("valor inválido: {0:?}; formas aceitas: {FORMAS_ACEITAS}")]
    Invalido(String),
}

/// Parses an amount in reais typed by a person (see the module documentation for the forms).
///
/// Pure: no locale, no environment. The result has at most two decimal places.
///
/// # Errors
/// [`ErroValor`] when the text is empty, negative, ambiguous, too large or not an amount.
pub fn parse_reais(input: &str) -> Result<Decimal, ErroValor> {
    let compacto: String = input.chars().filter(|c| !c.is_whitespace()).collect();
    let sem_moeda = compacto
        .strip_prefix("R$")
        .or_else(|| compacto.strip_prefix("r$"))
        .unwrap_or(&compacto);
    if sem_moeda.is_empty() {
        return Err(ErroValor::Vazio);
    }
    if let Some(resto) = sem_moeda.strip_prefix('-') {
        return match parse_reais(resto) {
            Ok(v) if v.is_zero() => Ok(v),
            Ok(_) => Err(ErroValor::Negativo(input.to_owned())),
            Err(e) => Err(e),
        };
    }
    let invalido = || ErroValor::Invalido(input.to_owned());
    if !sem_moeda
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    {
        return Err(invalido());
    }
    let (inteiro, centavos) = separar(sem_moeda).map_err(|ambiguo| {
        if ambiguo {
            ErroValor::Ambiguo(input.to_owned())
        } else {
            invalido()
        }
    })?;
    let digitos = inteiro.trim_start_matches('0');
    if digitos.len() > MAXIMO_DIGITOS {
        return Err(ErroValor::GrandeDemais(input.to_owned()));
    }
    let texto = format!(
        "{}.{centavos:0<2}",
        if inteiro.is_empty() { "0" } else { &inteiro }
    );
    texto.parse::<Decimal>().map_err(|_| invalido())
}

/// Splits into (integer digits, decimal digits). `Err(true)` when ambiguous, `Err(false)` when
/// malformed.
fn separar(s: &str) -> Result<(String, &str), bool> {
    let virgulas = s.matches(',').count();
    let pontos = s.matches('.').count();
    match (virgulas, pontos) {
        (0, 0) => Ok((s.to_owned(), "")),
        (1, _) => {
            let (int, dec) = s.split_once(',').expect("one comma");
            if dec.len() == 3 && pontos == 0 && !dec.is_empty() && !int.is_empty() {
                return Err(true); // 1,500
            }
            if dec.is_empty() || dec.len() > 2 || dec.contains('.') {
                return Err(false);
            }
            Ok((milhares(int).ok_or(false)?, dec))
        }
        (0, 1) => {
            let (int, dec) = s.split_once('.').expect("one dot");
            match dec.len() {
                1 | 2 if !int.is_empty() => Ok((int.to_owned(), dec)),
                3 if !int.is_empty() && int.len() <= 3 => Err(true), // 1.500
                _ => Err(false),
            }
        }
        (0, _) => Ok((milhares(s).ok_or(false)?, "")), // 1.500.000
        _ => Err(false),
    }
}

/// Digits grouped with dots (`1.500.000`) or plain digits, as plain digits.
fn milhares(s: &str) -> Option<String> {
    if s.is_empty() {
        return None;
    }
    if !s.contains('.') {
        return Some(s.to_owned());
    }
    let grupos: Vec<&str> = s.split('.').collect();
    let primeiro_ok = (1..=3).contains(&grupos[0].len());
    let resto_ok = grupos[1..].iter().all(|g| g.len() == 3);
    (primeiro_ok && resto_ok).then(|| grupos.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn accepted_forms() {
        for (entrada, reais) in [
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
            assert_eq!(parse_reais(entrada), Ok(v(reais)), "{entrada}");
        }
    }

    #[test]
    fn ambiguous_forms_are_refused_with_the_accepted_forms() {
        for entrada in ["1.500", "1,500", "10.000", "999.999"] {
            let e = parse_reais(entrada).unwrap_err();
            assert!(matches!(e, ErroValor::Ambiguo(_)), "{entrada}: {e:?}");
            assert!(e.to_string().contains("1.500,00"), "{e}");
        }
    }

    #[test]
    fn malformed_forms_are_refused() {
        for entrada in [
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
            assert!(parse_reais(entrada).is_err(), "{entrada:?}");
        }
        assert!(matches!(parse_reais("-10"), Err(ErroValor::Negativo(_))));
        assert!(matches!(
            parse_reais("99999999999999"),
            Err(ErroValor::GrandeDemais(_))
        ));
        assert_eq!(parse_reais("9999999999999,99"), Ok(v("9999999999999.99")));
    }
}
