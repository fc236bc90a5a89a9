//! The spreadsheet and map outputs of a batch, by the extension of `--saida`:
//!
//! - `.csv`: one column per field ([`super::columns`]), `;` separator, decimal comma, dates as
//!   `dd/mm/aaaa hh:mm:ss`, UTF-8 with BOM (Excel in Portuguese opens it as columns); appended
//!   record by record like JSON Lines;
//! - `.xlsx` (rust_xlsxwriter): sheet `Resultados` with typed cells (numbers, dates, booleans),
//!   one row per key in input order, and a sheet `Resumo` with the run's summary;
//! - `.geojson`: a FeatureCollection with one Point per record at its decimal-degree
//!   coordinates (RFC 7946: `[longitude, latitude]`; no geometry when the record has none) and
//!   every field as a property (opens as a map in QGIS or geojson.io).
//!
//! `.xlsx` and `.geojson` cannot be appended to: the records are kept in a hidden JSON Lines file
//! beside them ([`records_file`], which a rerun resumes from) and the file is written
//! whole from it at the end of every run, interrupted or not. When the batch finishes (every key
//! answered, no errors) the hidden file is removed, and a rerun into that output is refused.

use std::path::{Path, PathBuf};

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use serde_json::{Value, json};

use super::columns::{self, ColumnValue};
use super::kind::BatchKind;
use super::record::Summary;
use super::record::{FileFormat, Record};
use carapi_sdk::domain::br;

/// Where the records of an output live: the file itself (JSON Lines, CSV), or a hidden JSON
/// Lines file beside a `.xlsx`/`.geojson` (`.resultado.xlsx.registros.jsonl`).
pub(crate) fn records_file(output: &Path, format: FileFormat) -> PathBuf {
    match format {
        FileFormat::Xlsx | FileFormat::Geojson => {
            let name = output
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            output.with_file_name(format!(".{name}.registros.jsonl"))
        }
        _ => output.to_path_buf(),
    }
}

/// A cell of the `.csv`: decimal comma, Brazilian date, `sim`/`não`.
pub(crate) fn csv_text(v: &ColumnValue) -> String {
    match v {
        ColumnValue::Empty => String::new(),
        ColumnValue::Text(s) => s.clone(),
        ColumnValue::Number(n) => {
            let n = n.normalize();
            br::format_decimal(n, n.scale())
        }
        ColumnValue::DateTime(d) => d.format("%d/%m/%Y %H:%M:%S").to_string(),
        ColumnValue::Date(d) => d.format("%d/%m/%Y").to_string(),
        ColumnValue::Bool(b) => if *b { "sim" } else { "não" }.to_owned(),
    }
}

/// The records in input order (`order`: the input's keys); keys not in the input go last.
pub(crate) fn sort_by_input(records: Vec<Record>, order: &[String]) -> Vec<Record> {
    let pos: std::collections::HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut latest: std::collections::HashMap<String, Record> = Default::default();
    for r in records {
        latest.insert(r.key.clone(), r);
    }
    let mut v: Vec<Record> = latest.into_values().collect();
    v.sort_by_key(|r| {
        (
            pos.get(r.key.as_str()).copied().unwrap_or(usize::MAX),
            r.key.clone(),
        )
    });
    v
}

/// What the `Resumo` sheet shows.
#[derive(Debug, Clone)]
pub(crate) struct SummaryInfo<'a> {
    /// Lookup kind.
    pub(crate) kind: BatchKind,
    /// The input file's name.
    pub(crate) input: String,
    /// This run's counters.
    pub(crate) summary: &'a Summary,
    /// With the origin columns (the archive is configured).
    pub(crate) origin: bool,
}

/// Writes the `.xlsx`.
///
/// # Errors
/// rust_xlsxwriter's errors (file system, limits).
pub(crate) fn xlsx(
    path: &Path,
    records: &[Record],
    info: &SummaryInfo<'_>,
) -> Result<(), XlsxError> {
    let mut wb = Workbook::new();
    let datetime_format = Format::new().set_num_format("dd/mm/yyyy hh:mm:ss");
    let date_format = Format::new().set_num_format("dd/mm/yyyy");
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet().set_name("Resultados")?;
    let cols = columns::names(info.kind, info.origin);
    for (c, name) in cols.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, *name, &bold)?;
    }
    let mut row = 1u32;
    let mut status = [0usize; 3];
    for r in records {
        status[r.status as usize] += 1;
        for values in columns::rows(info.kind, r, info.origin) {
            for (c, v) in values.iter().enumerate() {
                let c = c as u16;
                match v {
                    ColumnValue::Empty => {}
                    ColumnValue::Text(s) => {
                        ws.write_string(row, c, s)?;
                    }
                    ColumnValue::Number(n) => {
                        ws.write_number(row, c, n.to_f64().unwrap_or_default())?;
                    }
                    ColumnValue::DateTime(d) => {
                        ws.write_datetime_with_format(row, c, d, &datetime_format)?;
                    }
                    ColumnValue::Date(d) => {
                        ws.write_date_with_format(row, c, d, &date_format)?;
                    }
                    ColumnValue::Bool(b) => {
                        ws.write_boolean(row, c, *b)?;
                    }
                }
            }
            row += 1;
        }
    }
    ws.autofit();
    let rs = wb.add_worksheet().set_name("Resumo")?;
    let brl_format = Format::new().set_num_format("\"R$\" #,##0.00");
    let summary_rows: [(&str, Decimal); 6] = [
        ("Chaves no arquivo", Decimal::from(records.len())),
        ("Encontradas", Decimal::from(status[0])),
        ("Não encontradas", Decimal::from(status[1])),
        ("Com erro", Decimal::from(status[2])),
        (
            "Inválidas (não enviadas)",
            Decimal::from(info.summary.invalid),
        ),
        (
            "Não enviadas nesta execução",
            Decimal::from(info.summary.not_sent),
        ),
    ];
    rs.write_string_with_format(0, 0, "Consulta", &bold)?;
    rs.write_string(0, 1, info.kind.name())?;
    rs.write_string_with_format(1, 0, "Entrada", &bold)?;
    rs.write_string(1, 1, &info.input)?;
    for (i, (label, n)) in summary_rows.iter().enumerate() {
        let l = i as u32 + 2;
        rs.write_string_with_format(l, 0, *label, &bold)?;
        rs.write_number(l, 1, n.to_f64().unwrap_or_default())?;
    }
    rs.write_string_with_format(8, 0, "Cobrado nesta execução", &bold)?;
    rs.write_number_with_format(
        8,
        1,
        info.summary.cobrado.to_f64().unwrap_or_default(),
        &brl_format,
    )?;
    rs.autofit();
    wb.save(path)
}

/// The `.geojson` text: a FeatureCollection, one feature per row (with the origin properties
/// when `origin`).
pub(crate) fn geojson(kind: BatchKind, records: &[Record], origin: bool) -> String {
    let cols = columns::names(kind, origin);
    let mut features = vec![];
    for r in records {
        for values in columns::rows(kind, r, origin) {
            let geometry = columns::coordinates(kind, origin, &values).map(
                |(lon, lat)| json!({"type": "Point", "coordinates": [lon.to_f64(), lat.to_f64()]}),
            );
            let props: serde_json::Map<String, Value> = cols
                .iter()
                .zip(&values)
                .map(|(c, v)| ((*c).to_owned(), json_of(v)))
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

fn json_of(v: &ColumnValue) -> Value {
    match v {
        ColumnValue::Empty => Value::Null,
        ColumnValue::Text(s) => Value::String(s.clone()),
        // Integers (httpStatus, total) stay integers: `200`, not `200.0`.
        ColumnValue::Number(n) if n.fract().is_zero() => {
            n.to_i64().map_or(Value::Null, |i| Value::Number(i.into()))
        }
        ColumnValue::Number(n) => n
            .to_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        ColumnValue::DateTime(d) => Value::String(d.format("%Y-%m-%dT%H:%M:%S").to_string()),
        ColumnValue::Date(d) => Value::String(d.format("%Y-%m-%d").to_string()),
        ColumnValue::Bool(b) => Value::Bool(*b),
    }
}
