//! Reading a batch's input file: one key per line, or one column of a CSV (`--coluna`, a known
//! column name such as SICAR's `cod_imovel`, or the first).
//!
//! - Empty lines and lines starting with `#` are skipped.
//! - The delimiter is `,` unless the first line has `;` and no `,` (spreadsheets saved in
//!   Brazilian locale use `;`). Quotes are CSV quotes.
//! - A first row whose first column is not a valid key and has no digit is a header and skipped.
//! - Each key is normalised by the SDK's parser (`CodigoCar::parse`, `CpfCnpj::parse`: case,
//!   dots, masks); duplicates are dropped after normalisation, keeping the first occurrence's order;
//!   invalid keys are reported with their line number and never sent.

use carapi_sdk::{CodigoCar, CpfCnpj};

/// Which kind of key a batch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// CAR codes (`car`, `completo`, `recibo`).
    Car,
    /// CPF/CNPJ (`proprietario`).
    Document,
}

impl KeyKind {
    /// Normalises and validates one key; the canonical form or the reason it is invalid.
    ///
    /// # Errors
    /// The validation message (Portuguese).
    pub(crate) fn normalize(self, raw: &str) -> Result<String, String> {
        match self {
            KeyKind::Car => CodigoCar::parse(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
            KeyKind::Document => CpfCnpj::parse(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
        }
    }
}

/// A key that was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidKey {
    /// 1-based line number in the input file.
    pub(crate) line: usize,
    /// The text as read.
    pub(crate) raw: String,
    /// Why.
    pub(crate) reason: String,
}

/// The parsed input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Input {
    /// Canonical keys, unique, in input order.
    pub(crate) keys: Vec<String>,
    /// Invalid keys (reported, not sent).
    pub(crate) invalid: Vec<InvalidKey>,
    /// How many duplicates were dropped.
    pub(crate) duplicates: usize,
}

/// Column names understood without `--coluna`, per kind of key (SICAR exports call the CAR code
/// `cod_imovel`).
fn known_columns(kind: KeyKind) -> &'static [&'static str] {
    match kind {
        KeyKind::Car => &["cod_imovel", "codigo_car", "codigocar", "car"],
        KeyKind::Document => &["cpf_cnpj", "cpf", "cnpj", "documento"],
    }
}

/// Parses the text of an input file, reading the first column (or a known column, see
/// [`known_columns`]).
#[cfg(test)]
pub(crate) fn read(text: &str, kind: KeyKind) -> Input {
    read_with(text, kind, None).unwrap_or_default()
}

/// Parses the text of an input file, reading the column `column` (a header name, any case, or a
/// 1-based number); without it, a column with a known name ([`known_columns`]), else the
/// first.
///
/// # Errors
/// A Portuguese message when `column` names no column of the header or is `0`.
pub(crate) fn read_with(text: &str, kind: KeyKind, column: Option<&str>) -> Result<Input, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let delim = if first.contains(';') && !first.contains(',') {
        b';'
    } else {
        b','
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delim)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut input = Input::default();
    let mut seen = std::collections::HashSet::new();
    let mut col: Option<usize> = None;
    for record in reader.records() {
        let r = match record {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                input.invalid.push(InvalidKey {
                    line,
                    raw: String::new(),
                    reason: csv_reason(&e),
                });
                continue;
            }
        };
        let line = r.position().map_or(0, |p| p.line() as usize);
        let idx = match col {
            Some(i) => i,
            None => {
                let (i, is_header) = choose_column(&r, kind, column)?;
                col = Some(i);
                if is_header {
                    continue;
                }
                i
            }
        };
        let raw = r.get(idx).unwrap_or("").to_owned();
        if raw.is_empty() {
            continue;
        }
        match kind.normalize(&raw) {
            Ok(key) => {
                if seen.insert(key.clone()) {
                    input.keys.push(key);
                } else {
                    input.duplicates += 1;
                }
            }
            Err(reason) => input.invalid.push(InvalidKey { line, raw, reason }),
        }
    }
    Ok(input)
}

/// The column to read, from the first row, and whether that row is a header.
fn choose_column(
    first: &csv::StringRecord,
    kind: KeyKind,
    column: Option<&str>,
) -> Result<(usize, bool), String> {
    let names: Vec<String> = first.iter().map(|c| c.to_lowercase()).collect();
    let by_name = |name: &str| names.iter().position(|n| n == &name.to_lowercase());
    let idx = match column {
        Some(c) => match c.trim().parse::<usize>() {
            Ok(0) => return Err("--coluna conta a partir de 1".into()),
            Ok(n) => n - 1,
            Err(_) => {
                let i = by_name(c.trim()).ok_or_else(|| {
                    format!(
                        "coluna {c:?} não encontrada no cabeçalho ({})",
                        first.iter().collect::<Vec<_>>().join(", ")
                    )
                })?;
                return Ok((i, true));
            }
        },
        None => match known_columns(kind).iter().find_map(|n| by_name(n)) {
            Some(i) => return Ok((i, true)),
            None => 0,
        },
    };
    let raw = first.get(idx).unwrap_or("");
    let is_header = kind.normalize(raw).is_err() && !raw.chars().any(|c| c.is_ascii_digit());
    Ok((idx, is_header))
}

/// A CSV reading error in Portuguese (the csv crate's text is English).
fn csv_reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Io(io) => crate::foreign_errors::io(io),
        csv::ErrorKind::Utf8 { .. } => "linha que não é texto UTF-8".to_owned(),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("a linha tem {len} campos; a primeira tem {expected_len}"),
        _ => "linha CSV inválida".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

    #[test]
    fn lines_csv_header_duplicates_invalid() {
        let text = format!(
            "codigo_car,obs\n{A},primeiro\n\n# comentário\n{},dup\ndf-5300108-b69b.317d.d02c.43da.a77a.0784.aeef.7d47\nXX-123,ruim\nZZ-0000000-SANDBOXCARBASICO0000000000000000\n",
            A.to_lowercase()
        );
        let e = read(&text, KeyKind::Car);
        assert_eq!(
            e.keys,
            vec![
                A.to_owned(),
                "ZZ-0000000-SANDBOXCARBASICO0000000000000000".to_owned()
            ]
        );
        assert_eq!(e.duplicates, 2);
        assert_eq!(e.invalid.len(), 1);
        assert_eq!(e.invalid[0].raw, "XX-123");
        assert_eq!(e.invalid[0].line, 7);
    }

    #[test]
    fn semicolon_csv_and_masked_documents() {
        let e = read(
            "documento;nome\n529.982.247-25;Fulano\n52998224725;dup\n123.456.789-00;x\n",
            KeyKind::Document,
        );
        assert_eq!(e.keys, vec!["52998224725".to_owned()]);
        assert_eq!(e.duplicates, 1);
        assert_eq!(e.invalid.len(), 1);
    }

    #[test]
    fn known_columns_and_coluna() {
        let sicar = format!("municipio;cod_imovel;area\nBrasília;{A};2,0\n");
        assert_eq!(read(&sicar, KeyKind::Car).keys, vec![A.to_owned()]);
        let docs = "nome,cpf_cnpj\nFulano,529.982.247-25\n";
        assert_eq!(
            read(docs, KeyKind::Document).keys,
            vec!["52998224725".to_owned()]
        );
        let t = format!("x,meu codigo\n1,{A}\n");
        assert_eq!(
            read_with(&t, KeyKind::Car, Some("Meu Codigo"))
                .unwrap()
                .keys,
            vec![A.to_owned()]
        );
        assert_eq!(
            read_with(&t, KeyKind::Car, Some("2")).unwrap().keys,
            vec![A.to_owned()]
        );
        assert!(read_with(&t, KeyKind::Car, Some("nada")).is_err());
        assert!(read_with(&t, KeyKind::Car, Some("0")).is_err());
    }

    #[test]
    fn first_row_with_digits_is_not_a_header() {
        let e = read("12345\n", KeyKind::Document);
        assert_eq!(e.invalid.len(), 1);
    }
}
