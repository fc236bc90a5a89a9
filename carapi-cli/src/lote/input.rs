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
pub enum TipoChave {
    /// CAR codes (`car`, `completo`, `recibo`).
    Car,
    /// CPF/CNPJ (`proprietario`).
    Documento,
}

impl TipoChave {
    /// Normalises and validates one key; the canonical form or the reason it is invalid.
    ///
    /// # Errors
    /// The validation message (Portuguese).
    pub fn normalizar(self, raw: &str) -> Result<String, String> {
        match self {
            TipoChave::Car => CodigoCar::parse(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
            TipoChave::Documento => CpfCnpj::parse(raw)
                .map(|c| c.as_str().to_owned())
                .map_err(|e| e.to_string()),
        }
    }
}

/// A key that was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalida {
    /// 1-based line number in the input file.
    pub linha: usize,
    /// The text as read.
    pub valor: String,
    /// Why.
    pub reason: String,
}

/// The parsed input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entrada {
    /// Canonical keys, unique, in input order.
    pub chaves: Vec<String>,
    /// Invalid keys (reported, not sent).
    pub invalidas: Vec<Invalida>,
    /// How many duplicates were dropped.
    pub duplicadas: usize,
}

/// Column names understood without `--coluna`, per kind of key (SICAR exports call the CAR code
/// `cod_imovel`).
pub fn colunas_conhecidas(tipo: TipoChave) -> &'static [&'static str] {
    match tipo {
        TipoChave::Car => &["cod_imovel", "codigo_car", "codigocar", "car"],
        TipoChave::Documento => &["cpf_cnpj", "cpf", "cnpj", "documento"],
    }
}

/// Parses the text of an input file, reading the first column (or a known column, see
/// [`colunas_conhecidas`]).
pub fn ler(text: &str, tipo: TipoChave) -> Entrada {
    ler_com(text, tipo, None).unwrap_or_default()
}

/// Parses the text of an input file, reading the column `coluna` (a header name, any case, or a
/// 1-based number); without it, a column with a known name ([`colunas_conhecidas`]), else the
/// first.
///
/// # Errors
/// A Portuguese message when `coluna` names no column of the header or is `0`.
pub fn ler_com(text: &str, tipo: TipoChave, coluna: Option<&str>) -> Result<Entrada, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let primeira = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or("");
    let delim = if primeira.contains(';') && !primeira.contains(',') {
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
    let mut entrada = Entrada::default();
    let mut vistas = std::collections::HashSet::new();
    let mut col: Option<usize> = None;
    for record in reader.records() {
        let r = match record {
            Ok(r) => r,
            Err(e) => {
                let linha = e.position().map_or(0, |p| p.line() as usize);
                entrada.invalidas.push(Invalida {
                    linha,
                    valor: String::new(),
                    reason: motivo_csv(&e),
                });
                continue;
            }
        };
        let linha = r.position().map_or(0, |p| p.line() as usize);
        let idx = match col {
            Some(i) => i,
            None => {
                let (i, cabecalho) = escolher_coluna(&r, tipo, coluna)?;
                col = Some(i);
                if cabecalho {
                    continue;
                }
                i
            }
        };
        let valor = r.get(idx).unwrap_or("").to_owned();
        if valor.is_empty() {
            continue;
        }
        match tipo.normalizar(&valor) {
            Ok(chave) => {
                if vistas.insert(chave.clone()) {
                    entrada.chaves.push(chave);
                } else {
                    entrada.duplicadas += 1;
                }
            }
            Err(reason) => entrada.invalidas.push(Invalida {
                linha,
                valor,
                reason,
            }),
        }
    }
    Ok(entrada)
}

/// The column to read, from the first row, and whether that row is a header.
fn escolher_coluna(
    primeira: &csv::StringRecord,
    tipo: TipoChave,
    coluna: Option<&str>,
) -> Result<(usize, bool), String> {
    let names: Vec<String> = primeira.iter().map(|c| c.to_lowercase()).collect();
    let por_nome = |name: &str| names.iter().position(|n| n == &name.to_lowercase());
    let idx = match coluna {
        Some(c) => match c.trim().parse::<usize>() {
            Ok(0) => return Err("--coluna conta a partir de 1".into()),
            Ok(n) => n - 1,
            Err(_) => {
                let i = por_nome(c.trim()).ok_or_else(|| {
                    format!(
                        "coluna {c:?} não encontrada no cabeçalho ({})",
                        primeira.iter().collect::<Vec<_>>().join(", ")
                    )
                })?;
                return Ok((i, true));
            }
        },
        None => match colunas_conhecidas(tipo).iter().find_map(|n| por_nome(n)) {
            Some(i) => return Ok((i, true)),
            None => 0,
        },
    };
    let valor = primeira.get(idx).unwrap_or("");
    let cabecalho = tipo.normalizar(valor).is_err() && !valor.chars().any(|c| c.is_ascii_digit());
    Ok((idx, cabecalho))
}

/// A CSV reading error in Portuguese (the csv crate's text is English).
fn motivo_csv(e: &csv::Error) -> String {
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
        let e = ler(&text, TipoChave::Car);
        assert_eq!(
            e.chaves,
            vec![
                A.to_owned(),
                "ZZ-0000000-SANDBOXCARBASICO0000000000000000".to_owned()
            ]
        );
        assert_eq!(e.duplicadas, 2);
        assert_eq!(e.invalidas.len(), 1);
        assert_eq!(e.invalidas[0].valor, "XX-123");
        assert_eq!(e.invalidas[0].linha, 7);
    }

    #[test]
    fn semicolon_csv_and_masked_documents() {
        let e = ler(
            "documento;nome\n529.982.247-25;Fulano\n52998224725;dup\n123.456.789-00;x\n",
            TipoChave::Documento,
        );
        assert_eq!(e.chaves, vec!["52998224725".to_owned()]);
        assert_eq!(e.duplicadas, 1);
        assert_eq!(e.invalidas.len(), 1);
    }

    #[test]
    fn known_columns_and_coluna() {
        let sicar = format!("municipio;cod_imovel;area\nBrasília;{A};2,0\n");
        assert_eq!(ler(&sicar, TipoChave::Car).chaves, vec![A.to_owned()]);
        let docs = "nome,cpf_cnpj\nFulano,529.982.247-25\n";
        assert_eq!(
            ler(docs, TipoChave::Documento).chaves,
            vec!["52998224725".to_owned()]
        );
        let t = format!("x,meu codigo\n1,{A}\n");
        assert_eq!(
            ler_com(&t, TipoChave::Car, Some("Meu Codigo"))
                .unwrap()
                .chaves,
            vec![A.to_owned()]
        );
        assert_eq!(
            ler_com(&t, TipoChave::Car, Some("2")).unwrap().chaves,
            vec![A.to_owned()]
        );
        assert!(ler_com(&t, TipoChave::Car, Some("nada")).is_err());
        assert!(ler_com(&t, TipoChave::Car, Some("0")).is_err());
    }

    #[test]
    fn first_row_with_digits_is_not_a_header() {
        let e = ler("12345\n", TipoChave::Documento);
        assert_eq!(e.invalidas.len(), 1);
    }
}
