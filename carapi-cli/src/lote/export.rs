//! The spreadsheet and map outputs of a batch, by the extension of `--saida`:
//!
//! - `.csv`: one column per field ([`super::campos`]), `;` separator, decimal comma, dates as
//!   `dd/mm/aaaa hh:mm:ss`, UTF-8 with BOM (Excel in Portuguese opens it as columns); appended
//!   record by record like JSON Lines;
//! - `.xlsx` (rust_xlsxwriter): sheet `Resultados` with typed cells (numbers, dates, booleans),
//!   one row per key in input order, and a sheet `Resumo` with the run's summary;
//! - `.geojson`: a FeatureCollection with one Point per record at its decimal-degree
//!   coordinates (RFC 7946: `[longitude, latitude]`; no geometry when the record has none) and
//!   every field as a property (opens as a map in QGIS or geojson.io).
//!
//! `.xlsx` and `.geojson` cannot be appended to: the records are kept in a hidden JSON Lines file
//! beside them ([`arquivo_de_registros`], which a rerun resumes from) and the file is written
//! whole from it at the end of every run, interrupted or not. When the batch finishes (every key
//! answered, no errors) the hidden file is removed, and a rerun into that output is refused.

use std::path::{Path, PathBuf};

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use serde_json::{Value, json};

use super::campos::{self, Valor};
use super::registro::Resumo;
use super::registro::{FormatoSaida, Resultado};
use super::tipo::TipoLote;
use carapi_sdk::domain::br;

/// Where the records of an output live: the file itself (JSON Lines, CSV), or a hidden JSON
/// Lines file beside a `.xlsx`/`.geojson` (`.resultado.xlsx.registros.jsonl`).
pub fn arquivo_de_registros(saida: &Path, formato: FormatoSaida) -> PathBuf {
    match formato {
        FormatoSaida::Xlsx | FormatoSaida::Geojson => {
            let name = saida
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            saida.with_file_name(format!(".{name}.registros.jsonl"))
        }
        _ => saida.to_path_buf(),
    }
}

/// A cell of the `.csv`: decimal comma, Brazilian date, `sim`/`não`.
pub fn texto_csv(v: &Valor) -> String {
    match v {
        Valor::Vazio => String::new(),
        Valor::Texto(s) => s.clone(),
        Valor::Numero(n) => {
            let n = n.normalize();
            br::format_decimal(n, n.scale())
        }
        Valor::DataHora(d) => d.format("%d/%m/%Y %H:%M:%S").to_string(),
        Valor::Data(d) => d.format("%d/%m/%Y").to_string(),
        Valor::Booleano(b) => if *b { "sim" } else { "não" }.to_owned(),
    }
}

/// The records in input order (`ordem`: the input's keys); keys not in the input go last.
pub fn ordenar(registros: Vec<Resultado>, ordem: &[String]) -> Vec<Resultado> {
    let pos: std::collections::HashMap<&str, usize> = ordem
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut ultimos: std::collections::HashMap<String, Resultado> = Default::default();
    for r in registros {
        ultimos.insert(r.chave.clone(), r);
    }
    let mut v: Vec<Resultado> = ultimos.into_values().collect();
    v.sort_by_key(|r| {
        (
            pos.get(r.chave.as_str()).copied().unwrap_or(usize::MAX),
            r.chave.clone(),
        )
    });
    v
}

/// What the `Resumo` sheet shows.
#[derive(Debug, Clone)]
pub struct InfoResumo<'a> {
    /// Lookup kind.
    pub tipo: TipoLote,
    /// The input file's name.
    pub entrada: String,
    /// This run's counters.
    pub resumo: &'a Resumo,
}

/// Writes the `.xlsx`.
///
/// # Errors
/// rust_xlsxwriter's errors (file system, limits).
pub fn xlsx(path: &Path, registros: &[Resultado], info: &InfoResumo<'_>) -> Result<(), XlsxError> {
    let mut wb = Workbook::new();
    let data = Format::new().set_num_format("dd/mm/yyyy hh:mm:ss");
    let dia = Format::new().set_num_format("dd/mm/yyyy");
    let negrito = Format::new().set_bold();
    let ws = wb.add_worksheet().set_name("Resultados")?;
    let cols = campos::colunas(info.tipo);
    for (c, name) in cols.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, *name, &negrito)?;
    }
    let mut linha = 1u32;
    let mut status = [0usize; 3];
    for r in registros {
        status[r.status as usize] += 1;
        for values in campos::linhas(info.tipo, r) {
            for (c, v) in values.iter().enumerate() {
                let c = c as u16;
                match v {
                    Valor::Vazio => {}
                    Valor::Texto(s) => {
                        ws.write_string(linha, c, s)?;
                    }
                    Valor::Numero(n) => {
                        ws.write_number(linha, c, n.to_f64().unwrap_or_default())?;
                    }
                    Valor::DataHora(d) => {
                        ws.write_datetime_with_format(linha, c, d, &data)?;
                    }
                    Valor::Data(d) => {
                        ws.write_date_with_format(linha, c, d, &dia)?;
                    }
                    Valor::Booleano(b) => {
                        ws.write_boolean(linha, c, *b)?;
                    }
                }
            }
            linha += 1;
        }
    }
    ws.autofit();
    let rs = wb.add_worksheet().set_name("Resumo")?;
    let reais = Format::new().set_num_format("\"R$\" #,##0.00");
    let linhas_resumo: [(&str, Decimal); 6] = [
        ("Chaves no arquivo", Decimal::from(registros.len())),
        ("Encontradas", Decimal::from(status[0])),
        ("Não encontradas", Decimal::from(status[1])),
        ("Com erro", Decimal::from(status[2])),
        (
            "Inválidas (não enviadas)",
            Decimal::from(info.resumo.invalidos),
        ),
        (
            "Não enviadas nesta execução",
            Decimal::from(info.resumo.nao_enviados),
        ),
    ];
    rs.write_string_with_format(0, 0, "Consulta", &negrito)?;
    rs.write_string(0, 1, info.tipo.name())?;
    rs.write_string_with_format(1, 0, "Entrada", &negrito)?;
    rs.write_string(1, 1, &info.entrada)?;
    for (i, (rotulo, n)) in linhas_resumo.iter().enumerate() {
        let l = i as u32 + 2;
        rs.write_string_with_format(l, 0, *rotulo, &negrito)?;
        rs.write_number(l, 1, n.to_f64().unwrap_or_default())?;
    }
    rs.write_string_with_format(8, 0, "Cobrado nesta execução", &negrito)?;
    rs.write_number_with_format(
        8,
        1,
        info.resumo.cobrado.to_f64().unwrap_or_default(),
        &reais,
    )?;
    rs.autofit();
    wb.save(path)
}

/// The `.geojson` text: a FeatureCollection, one feature per row.
pub fn geojson(tipo: TipoLote, registros: &[Resultado]) -> String {
    let cols = campos::colunas(tipo);
    let mut features = vec![];
    for r in registros {
        for values in campos::linhas(tipo, r) {
            let geometry = campos::coordenadas(tipo, &values).map(
                |(lon, lat)| json!({"type": "Point", "coordinates": [lon.to_f64(), lat.to_f64()]}),
            );
            let props: serde_json::Map<String, Value> = cols
                .iter()
                .zip(&values)
                .map(|(c, v)| ((*c).to_owned(), json_de(v)))
                .collect();
            features.push(json!({
                "type": "Feature",
                "geometry": geometry,
                "properties": props,
            }));
        }
    }
    let fc = json!({"type": "FeatureCollection", "features": features});
    serde_json::to_string_pretty(&fc).unwrap_or_default()
}

fn json_de(v: &Valor) -> Value {
    match v {
        Valor::Vazio => Value::Null,
        Valor::Texto(s) => Value::String(s.clone()),
        // Integers (httpStatus, total) stay integers: `200`, not `200.0`.
        Valor::Numero(n) if n.fract().is_zero() => {
            n.to_i64().map_or(Value::Null, |i| Value::Number(i.into()))
        }
        Valor::Numero(n) => n
            .to_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Valor::DataHora(d) => Value::String(d.format("%Y-%m-%dT%H:%M:%S").to_string()),
        Valor::Data(d) => Value::String(d.format("%Y-%m-%d").to_string()),
        Valor::Booleano(b) => Value::Bool(*b),
    }
}
