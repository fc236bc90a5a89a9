//! The spreadsheet and map outputs of a batch, by the extension of `--saida`, written whole at
//! the end of every run (interrupted or not) from the batch's records ([`super::output`]) and
//! its input: one row per input line ([`super::columns`]), in input order, invalid lines
//! (with their reason) and repeated keys (looked up once, marked `repetida`) included, the
//! input's own columns carried through. Each file is replaced atomically (a temporary file,
//! then a rename) under the run's lock.
//!
//! - `.csv`: the Portuguese titles as the header, `;` separator, decimal comma, dates as
//!   `dd/mm/aaaa hh:mm:ss` in Brasília time, UTF-8 with BOM (Excel in Portuguese opens it);
//! - `.xlsx` (rust_xlsxwriter): sheet `Resultados` with the titles in a frozen header row with
//!   a filter, typed cells (numbers, dates, booleans, the price in reais), and a sheet `Resumo`
//!   with the whole batch's counts;
//! - `.geojson`: a FeatureCollection with one Point per key at its decimal-degree coordinates
//!   (RFC 7946: `[longitude, latitude]`) and every field as a property under its machine name
//!   (opens as a map in QGIS or geojson.io). A feature without a position (the owner lookup's
//!   answer has none in the contract; a record without coordinates; a key not found) has a
//!   null geometry and says why in `semPosicao`.
//!
//! The records of these formats live in a hidden JSON Lines file beside them
//! ([`records_file`]), which a rerun resumes from (a rerun of a finished batch writes the file
//! again and buys nothing). Such an output without its records (a file another program wrote)
//! is refused: resuming would not know which keys it answers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};
use serde_json::{Value, json};

use super::columns::{ColumnValue, Layout};
use super::input::{Input, LineKind};
use super::kind::BatchKind;
use super::record::{BYTE_ORDER_MARK, BatchStatus, FileFormat, Record, Summary};

/// Where the records of an output live: the file itself (JSON Lines), or a hidden JSON Lines
/// file beside a `.csv`/`.xlsx`/`.geojson` (`.resultado.xlsx.registros.jsonl`).
pub(crate) fn records_file(output: &Path, format: FileFormat) -> PathBuf {
    if !format.is_rendered() {
        return output.to_path_buf();
    }
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}.registros.jsonl"))
}

/// A batch as its files show it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Batch<'a> {
    /// Lookup kind.
    pub(crate) kind: BatchKind,
    /// The input file's name (the `Resumo` sheet).
    pub(crate) input_name: &'a str,
    /// The parsed input.
    pub(crate) input: &'a Input,
    /// The records, one per key (the newest).
    pub(crate) records: &'a [Record],
    /// This run's counters.
    pub(crate) run: &'a Summary,
}

impl Batch<'_> {
    /// The layout: one row per input line, with the origin columns when some answer came
    /// through the archive.
    fn layout(&self) -> Layout {
        let origin = self.records.iter().any(|r| r.origin.is_some());
        Layout::lines(self.kind, origin, self.input.extra_columns.clone())
    }

    /// Every row, in input order; `chaves_only`: one line per distinct valid key (the map), not
    /// invalid lines nor repeats.
    fn rows(&self, layout: &Layout, chaves_only: bool) -> Vec<Vec<ColumnValue>> {
        let by_chave: HashMap<&str, &Record> =
            self.records.iter().map(|r| (r.chave.as_str(), r)).collect();
        self.input
            .lines
            .iter()
            .filter(|l| !chaves_only || matches!(l.kind, LineKind::Valid(_)))
            .flat_map(|l| layout.line_rows(l, l.chave().and_then(|k| by_chave.get(k).copied())))
            .collect()
    }

    /// The whole batch's counts.
    fn totals(&self) -> Totals {
        let by_chave: HashMap<&str, &Record> =
            self.records.iter().map(|r| (r.chave.as_str(), r)).collect();
        let mut t = Totals {
            lines: self.input.lines.len(),
            distinct: self.input.distinct.len(),
            repeats: self.input.duplicates,
            invalid: self.input.invalid.len(),
            ..Totals::default()
        };
        for k in &self.input.distinct {
            match by_chave.get(k.as_str()) {
                Some(r) => {
                    match r.status {
                        BatchStatus::Found => t.found += 1,
                        BatchStatus::NotFound => t.not_found += 1,
                        BatchStatus::Error => t.errors += 1,
                    }
                    if r.cobrado {
                        t.charged += r.preco.unwrap_or_default();
                    }
                }
                None => t.pending += 1,
            }
        }
        t
    }
}

/// A batch's counts over all its runs.
#[derive(Debug, Clone, Default)]
struct Totals {
    lines: usize,
    distinct: usize,
    repeats: usize,
    invalid: usize,
    found: usize,
    not_found: usize,
    errors: usize,
    pending: usize,
    charged: Decimal,
}

/// Writes the `.csv`, `.xlsx` or `.geojson` of `batch` at `path` (atomically).
///
/// # Errors
/// File-system errors; rust_xlsxwriter's (limits), as an I/O error.
pub(crate) fn render(path: &Path, format: FileFormat, batch: &Batch<'_>) -> std::io::Result<()> {
    let bytes = match format {
        FileFormat::Csv => csv(batch)?,
        FileFormat::Xlsx => xlsx(batch).map_err(|e| match e {
            XlsxError::IoError(io) => io,
            other => std::io::Error::other(other.to_string()),
        })?,
        FileFormat::Geojson => geojson(batch).into_bytes(),
        FileFormat::Jsonl => return Ok(()),
    };
    super::output::replace(path, &bytes)
}

/// The `.csv`: BOM, the titles, one row per input line (the analyst's dialect).
fn csv(batch: &Batch<'_>) -> std::io::Result<Vec<u8>> {
    let layout = batch.layout();
    let mut w = csv::WriterBuilder::new()
        .delimiter(b';')
        .from_writer(BYTE_ORDER_MARK.as_bytes().to_vec());
    w.write_record(layout.titles())
        .map_err(std::io::Error::other)?;
    for row in batch.rows(&layout, false) {
        w.write_record(row.iter().map(ColumnValue::spreadsheet))
            .map_err(std::io::Error::other)?;
    }
    w.into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// The `.xlsx` workbook's bytes.
fn xlsx(batch: &Batch<'_>) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet().set_name("Resultados")?;
    let layout = batch.layout();
    let titles = layout.titles();
    for (c, title) in titles.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, title, &bold)?;
    }
    let price_column = layout.names().iter().position(|n| n == "preco");
    let rows = batch.rows(&layout, false);
    for (r, values) in rows.iter().enumerate() {
        write_row(ws, r as u32 + 1, values, price_column)?;
    }
    ws.set_freeze_panes(1, 0)?;
    ws.autofilter(
        0,
        0,
        rows.len() as u32,
        titles.len().saturating_sub(1) as u16,
    )?;
    ws.autofit();
    summary_sheet(wb.add_worksheet().set_name("Resumo")?, batch)?;
    wb.save_to_buffer()
}

/// One row of `Resultados`, typed; the price column in reais.
fn write_row(
    ws: &mut Worksheet,
    row: u32,
    values: &[ColumnValue],
    price_column: Option<usize>,
) -> Result<(), XlsxError> {
    let datetime_format = Format::new().set_num_format("dd/mm/yyyy hh:mm:ss");
    let date_format = Format::new().set_num_format("dd/mm/yyyy");
    let brl_format = Format::new().set_num_format("\"R$\" #,##0.00");
    for (c, v) in values.iter().enumerate() {
        let col = c as u16;
        match v {
            ColumnValue::Empty => {}
            ColumnValue::Text(s) => {
                ws.write_string(row, col, s)?;
            }
            ColumnValue::Number(n) if Some(c) == price_column => {
                ws.write_number_with_format(row, col, n.to_f64().unwrap_or_default(), &brl_format)?;
            }
            ColumnValue::Number(n) => {
                ws.write_number(row, col, n.to_f64().unwrap_or_default())?;
            }
            ColumnValue::DateTime(d) => {
                ws.write_datetime_with_format(row, col, d.naive_local(), &datetime_format)?;
            }
            ColumnValue::Date(d) => {
                ws.write_date_with_format(row, col, d, &date_format)?;
            }
            ColumnValue::Bool(b) => {
                ws.write_boolean(row, col, *b)?;
            }
        }
    }
    Ok(())
}

/// The `Resumo` sheet: what was asked, the whole batch's counts, what was charged.
fn summary_sheet(rs: &mut Worksheet, batch: &Batch<'_>) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    let brl_format = Format::new().set_num_format("\"R$\" #,##0.00");
    let t = batch.totals();
    rs.write_string_with_format(0, 0, "Consulta", &bold)?;
    rs.write_string(0, 1, batch.kind.name())?;
    rs.write_string_with_format(1, 0, "Entrada", &bold)?;
    rs.write_string(1, 1, batch.input_name)?;
    let counts: [(&str, usize); 9] = [
        ("Linhas na entrada", t.lines),
        ("Chaves distintas", t.distinct),
        ("Repetidas (consultadas uma vez)", t.repeats),
        ("Inválidas (não enviadas)", t.invalid),
        ("Encontradas", t.found),
        ("Não encontradas", t.not_found),
        ("Com erro", t.errors),
        ("Pendentes (ainda não consultadas)", t.pending),
        ("Não enviadas nesta execução", batch.run.not_sent),
    ];
    for (i, (label, n)) in counts.iter().enumerate() {
        let l = i as u32 + 2;
        rs.write_string_with_format(l, 0, *label, &bold)?;
        rs.write_number(l, 1, *n as f64)?;
    }
    let money: [(&str, Decimal); 2] = [
        ("Cobrado no lote (todas as execuções)", t.charged),
        ("Cobrado nesta execução", batch.run.cobrado),
    ];
    for (i, (label, v)) in money.iter().enumerate() {
        let l = counts.len() as u32 + 2 + i as u32;
        rs.write_string_with_format(l, 0, *label, &bold)?;
        rs.write_number_with_format(l, 1, v.to_f64().unwrap_or_default(), &brl_format)?;
    }
    rs.autofit();
    Ok(())
}

/// Why an owner lookup's feature has no position (the contract's answer has none).
const OWNER_WITHOUT_POSITION: &str = "a consulta por CPF/CNPJ não traz a posição do imóvel \
     (contrato da API); o ponto vem da consulta do CAR: carapi car <registroCar>";

/// The `.geojson` of `batch`: one feature per distinct valid key.
fn geojson(batch: &Batch<'_>) -> String {
    let layout = batch.layout();
    collection(batch.kind, &layout, batch.rows(&layout, true))
}

/// The GeoJSON of single lookups' records (`carapi car|proprietario -o geojson`), a feature per
/// row.
pub(crate) fn geojson_records(kind: BatchKind, records: &[Record]) -> String {
    let layout = Layout::records(kind, false);
    let rows = records.iter().flat_map(|r| layout.record_rows(r)).collect();
    collection(kind, &layout, rows)
}

/// A FeatureCollection of `rows`, each a Point at its coordinates or a null geometry with
/// `semPosicao`.
fn collection(kind: BatchKind, layout: &Layout, rows: Vec<Vec<ColumnValue>>) -> String {
    let names = layout.names();
    let status = names.iter().position(|n| n == "status");
    let features: Vec<Value> = rows
        .into_iter()
        .map(|values| {
            let position = layout.coordinates(&values);
            let mut props: serde_json::Map<String, Value> = names
                .iter()
                .zip(&values)
                .map(|(c, v)| (c.clone(), json_of(v)))
                .collect();
            if position.is_none() {
                let found = status.and_then(|i| values.get(i))
                    == Some(&ColumnValue::Text("encontrado".into()));
                let why = match kind {
                    BatchKind::Proprietario if found => OWNER_WITHOUT_POSITION,
                    _ if found => "o registro não tem coordenadas",
                    _ => "sem resposta com dados (veja status e mensagem)",
                };
                props.insert("semPosicao".into(), why.into());
            }
            let geometry = position.map(
                |(lon, lat)| json!({"type": "Point", "coordinates": [lon.to_f64(), lat.to_f64()]}),
            );
            json!({"type": "Feature", "geometry": geometry, "properties": props})
        })
        .collect();
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
        ColumnValue::DateTime(_) | ColumnValue::Date(_) => Value::String(v.raw()),
        ColumnValue::Bool(b) => Value::Bool(*b),
    }
}
