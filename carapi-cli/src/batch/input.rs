//! Reading a batch's input file: one key per line, or one column of a CSV (`--coluna`, a known
//! column name such as SICAR's `cod_imovel`, or the first).
//!
//! - Empty lines and lines starting with `#` are skipped.
//! - The delimiter is `,` unless the first line has `;` and no `,` (spreadsheets saved in
//!   Brazilian locale use `;`). Quotes are CSV quotes.
//! - A first row whose first column is not a valid key and has no digit is a header and skipped.
//! - Each key is normalised by the SDK's parsers for what people paste
//!   (`CodigoCar::parse_pasted`: case, dots, spaces or en/em dashes for the dashes, no dashes;
//!   `CpfCnpj::parse`: masks); a key seen before (after normalisation) is a repeat, looked up
//!   once; invalid keys are reported with their line number and never sent.
//! - Every data line is kept ([`InputLine`]), with the input's other columns, so the files of a
//!   batch have one row per input line, the input's own columns (a supplier's id beside the
//!   code) carried through.

use carapi_sdk::{CodigoCar, CpfCnpj};

/// Which kind of key a batch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChaveKind {
    /// CAR codes (`car`, `completo`, `recibo`).
    Car,
    /// CPF/CNPJ (`proprietario`).
    Document,
}

impl ChaveKind {
    /// Normalises and validates one key as a person pasted it; the canonical form or the
    /// reason it is invalid.
    ///
    /// # Errors
    /// The validation message (Portuguese; a document masked, a CAR code as typed).
    pub(crate) fn normalize(self, raw: &str) -> Result<String, String> {
        match self {
            ChaveKind::Car => CodigoCar::parse_pasted(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
            ChaveKind::Document => CpfCnpj::parse(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
        }
    }
}

/// A key that was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidChave {
    /// 1-based line number in the input file.
    pub(crate) line: usize,
    /// The text as read.
    pub(crate) raw: String,
    /// Why.
    pub(crate) reason: String,
}

/// What one data line of the input holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// A valid key, first seen on this line (canonical form).
    Valid(String),
    /// A valid key seen on an earlier line (canonical form): looked up once.
    Repeat(String),
    /// Not a key: why.
    Invalid(String),
}

/// One data line of the input (header, blank and comment lines are not data lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputLine {
    /// 1-based line number in the input file.
    pub(crate) line: usize,
    /// The key's text as read.
    pub(crate) raw: String,
    /// The input's other columns on this line, in the order of [`Input::extra_columns`].
    pub(crate) extra: Vec<String>,
    /// What the line holds.
    pub(crate) kind: LineKind,
}

impl InputLine {
    /// The canonical key of a valid or repeated line.
    pub(crate) fn chave(&self) -> Option<&str> {
        match &self.kind {
            LineKind::Valid(k) | LineKind::Repeat(k) => Some(k),
            LineKind::Invalid(_) => None,
        }
    }
}

/// The parsed input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Input {
    /// The distinct valid keys (canonical), in input order: what the batch looks up.
    pub(crate) distinct: Vec<String>,
    /// Invalid keys (reported, not sent).
    pub(crate) invalid: Vec<InvalidChave>,
    /// How many lines repeat a key of an earlier line.
    pub(crate) duplicates: usize,
    /// Every data line, in order.
    pub(crate) lines: Vec<InputLine>,
    /// The names of the input's columns other than the key's (its header's, or `coluna N`).
    pub(crate) extra_columns: Vec<String>,
}

/// Column names understood without `--coluna`, per kind of key (SICAR exports call the CAR code
/// `cod_imovel`).
fn known_columns(kind: ChaveKind) -> &'static [&'static str] {
    match kind {
        ChaveKind::Car => &["cod_imovel", "codigo_car", "codigocar", "car"],
        ChaveKind::Document => &["cpf_cnpj", "cpf", "cnpj", "documento"],
    }
}

/// Parses the text of an input file, reading the first column (or a known column, see
/// [`known_columns`]).
#[cfg(test)]
pub(crate) fn read(text: &str, kind: ChaveKind) -> Input {
    read_with(text, kind, None).unwrap_or_default()
}

/// Parses the text of an input file, reading the column `column` (a header name, any case, or a
/// 1-based number); without it, a column with a known name ([`known_columns`]), else the
/// first.
///
/// # Errors
/// A Portuguese message when `column` names no column of the header or is `0`.
pub(crate) fn read_with(
    text: &str,
    kind: ChaveKind,
    column: Option<&str>,
) -> Result<Input, String> {
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
                input.push_invalid(line, String::new(), vec![], csv_reason(&e));
                continue;
            }
        };
        let line = r.position().map_or(0, |p| p.line() as usize);
        let idx = match col {
            Some(i) => i,
            None => {
                let (i, is_header) = choose_column(&r, kind, column)?;
                col = Some(i);
                input.extra_columns = extra_names(&r, i, is_header);
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
        let extra: Vec<String> = (0..=input.extra_columns.len())
            .filter(|c| *c != idx)
            .take(input.extra_columns.len())
            .map(|c| r.get(c).unwrap_or("").to_owned())
            .collect();
        match kind.normalize(&raw) {
            Ok(chave) if seen.insert(chave.clone()) => {
                input.distinct.push(chave.clone());
                input
                    .lines
                    .push(line_of(line, raw, extra, LineKind::Valid(chave)));
            }
            Ok(chave) => {
                input.duplicates += 1;
                input
                    .lines
                    .push(line_of(line, raw, extra, LineKind::Repeat(chave)));
            }
            Err(reason) => input.push_invalid(line, raw, extra, reason),
        }
    }
    Ok(input)
}

fn line_of(line: usize, raw: String, extra: Vec<String>, kind: LineKind) -> InputLine {
    InputLine {
        line,
        raw,
        extra,
        kind,
    }
}

impl Input {
    fn push_invalid(&mut self, line: usize, raw: String, extra: Vec<String>, reason: String) {
        self.invalid.push(InvalidChave {
            line,
            raw: raw.clone(),
            reason: reason.clone(),
        });
        self.lines
            .push(line_of(line, raw, extra, LineKind::Invalid(reason)));
    }
}

/// The names of the columns other than `chave_column` in the first row: the header's names, or
/// `coluna N` (1-based) when the first row is data.
fn extra_names(first: &csv::StringRecord, chave_column: usize, is_header: bool) -> Vec<String> {
    first
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != chave_column)
        .map(|(i, name)| {
            if is_header && !name.is_empty() {
                name.to_owned()
            } else {
                format!("coluna {}", i + 1)
            }
        })
        .collect()
}

/// The column to read, from the first row, and whether that row is a header.
fn choose_column(
    first: &csv::StringRecord,
    kind: ChaveKind,
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
        let e = read(&text, ChaveKind::Car);
        assert_eq!(
            e.distinct,
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
            ChaveKind::Document,
        );
        assert_eq!(e.distinct, vec!["52998224725".to_owned()]);
        assert_eq!(e.duplicates, 1);
        assert_eq!(e.invalid.len(), 1);
    }

    #[test]
    fn known_columns_and_coluna() {
        let sicar = format!("municipio;cod_imovel;area\nBrasília;{A};2,0\n");
        assert_eq!(read(&sicar, ChaveKind::Car).distinct, vec![A.to_owned()]);
        let docs = "nome,cpf_cnpj\nFulano,529.982.247-25\n";
        assert_eq!(
            read(docs, ChaveKind::Document).distinct,
            vec!["52998224725".to_owned()]
        );
        let t = format!("x,meu codigo\n1,{A}\n");
        assert_eq!(
            read_with(&t, ChaveKind::Car, Some("Meu Codigo"))
                .unwrap()
                .distinct,
            vec![A.to_owned()]
        );
        assert_eq!(
            read_with(&t, ChaveKind::Car, Some("2")).unwrap().distinct,
            vec![A.to_owned()]
        );
        assert!(read_with(&t, ChaveKind::Car, Some("nada")).is_err());
        assert!(read_with(&t, ChaveKind::Car, Some("0")).is_err());
    }

    #[test]
    fn every_line_is_kept_with_the_inputs_own_columns() {
        let text = format!(
            "fornecedor;cod_imovel\n17;{A}\n18;xx\n19;{}\n20;DF 5300108 B69B317DD02C43DAA77A0784AEEF7D47\n",
            A.to_lowercase()
        );
        let e = read(&text, ChaveKind::Car);
        assert_eq!(e.extra_columns, ["fornecedor"]);
        assert_eq!(e.distinct, [A]);
        assert_eq!(e.duplicates, 2);
        let kinds: Vec<(usize, &str, &LineKind)> = e
            .lines
            .iter()
            .map(|l| (l.line, l.extra[0].as_str(), &l.kind))
            .collect();
        assert_eq!(kinds[0], (2, "17", &LineKind::Valid(A.to_owned())));
        assert!(matches!(kinds[1], (3, "18", LineKind::Invalid(_))));
        assert_eq!(kinds[2], (4, "19", &LineKind::Repeat(A.to_owned())));
        assert_eq!(kinds[3], (5, "20", &LineKind::Repeat(A.to_owned())));
        let plain = read(&format!("{A}\n"), ChaveKind::Car);
        assert!(plain.extra_columns.is_empty() && plain.lines[0].extra.is_empty());
    }

    #[test]
    fn a_document_whose_check_digit_fails_says_so() {
        let e = read("529.982.247-24\n", ChaveKind::Document);
        assert!(
            e.invalid[0]
                .reason
                .ends_with("dígito verificador não confere"),
            "{}",
            e.invalid[0].reason
        );
        assert!(!e.invalid[0].reason.contains("529.982.247-24"));
    }

    #[test]
    fn first_row_with_digits_is_not_a_header() {
        let e = read("12345\n", ChaveKind::Document);
        assert_eq!(e.invalid.len(), 1);
    }
}
