//! A batch's output file: one record per key, written and flushed as each answer arrives, and
//! read back on a rerun to skip the keys already answered.
//!
//! Format by the extension of `--saida`: `.csv` is a spreadsheet CSV with one column per field
//! (see [`super::export`]), `.xlsx` and `.geojson` are written whole from a hidden JSON Lines
//! file of records, anything else is JSON Lines, one object per line:
//!
//! ```json
//! {"chave":"DF-...","status":"encontrado","httpStatus":200,"cobrado":true,"resposta":{...}}
//! {"chave":"DF-...","status":"nao_encontrado","httpStatus":404,"codigoErro":"CAR_NAO_ENCONTRADO","mensagem":"..."}
//! {"chave":"DF-...","status":"erro","httpStatus":503,"codigoErro":"SERVICO_INDISPONIVEL","mensagem":"..."}
//! ```
//!
//! `encontrado` and `nao_encontrado` are final answers: a rerun with the same `--saida` skips them
//! (so it never pays twice for a key); `erro` records (5xx, network) are retried by a rerun. A
//! line cut short by a crash is removed before appending.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

pub(crate) use super::record::{BOM, BatchStatus, FileFormat, Previous, Record};

/// Writes records, one per line, flushed each time.
pub(crate) struct RecordWriter<'a> {
    w: Box<dyn Write + 'a>,
    format: FileFormat,
    kind: super::kind::BatchKind,
    origin: bool,
}

impl std::fmt::Debug for RecordWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escritor")
            .field("formato", &self.format)
            .finish()
    }
}

impl<'a> RecordWriter<'a> {
    /// A writer of `format` records ([`FileFormat::records_format`]) of a `kind` batch over `w`
    /// (CSV rows with the origin columns when `origin`); when `fresh`, writes the CSV header,
    /// preceded by the BOM when `bom` (a file, not stdout).
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn new(
        w: Box<dyn Write + 'a>,
        format: FileFormat,
        kind: super::kind::BatchKind,
        fresh: bool,
        bom: bool,
        origin: bool,
    ) -> io::Result<Self> {
        let mut e = RecordWriter {
            w,
            format: format.records_format(),
            kind,
            origin,
        };
        if fresh && e.format == FileFormat::Csv {
            if bom {
                e.w.write_all(BOM.as_bytes())?;
            }
            let header: Vec<String> = super::columns::names(kind, origin)
                .into_iter()
                .map(str::to_owned)
                .collect();
            e.csv_line(&header)?;
        }
        Ok(e)
    }

    /// Appends one record and flushes.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn append(&mut self, r: &Record) -> io::Result<()> {
        match self.format {
            FileFormat::Csv => {
                for row in super::columns::rows(self.kind, r, self.origin) {
                    let fields: Vec<String> = row.iter().map(super::export::csv_text).collect();
                    self.csv_line(&fields)?;
                }
                Ok(())
            }
            _ => {
                let mut line = serde_json::to_vec(r).map_err(io::Error::other)?;
                line.push(b'\n');
                self.w.write_all(&line)?;
                self.w.flush()
            }
        }
    }

    fn csv_line(&mut self, fields: &[String]) -> io::Result<()> {
        let mut buf = csv::WriterBuilder::new()
            .delimiter(b';')
            .from_writer(vec![]);
        buf.write_record(fields).map_err(io::Error::other)?;
        let bytes = buf
            .into_inner()
            .map_err(|e| io::Error::other(e.to_string()))?;
        self.w.write_all(&bytes)?;
        self.w.flush()
    }
}

/// Opens (or creates) the output file for appending, after reading the keys it already answers
/// and cutting a trailing partial line. Returns the file, whether it is new (empty), and the
/// answered keys.
///
/// # Errors
/// File-system errors.
pub(crate) fn open(path: &Path, format: FileFormat) -> io::Result<(File, bool, HashSet<String>)> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let mut bytes = vec![];
    f.read_to_end(&mut bytes)?;
    let complete_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete_len < bytes.len() {
        f.set_len(complete_len as u64)?;
        bytes.truncate(complete_len);
    }
    f.seek(SeekFrom::End(0))?;
    let answered = answered_keys(&bytes, format);
    Ok((f, bytes.is_empty(), answered))
}

/// The kind of lookup of a CSV output with these column names: the columns of
/// [`super::columns::names`] that only that kind has.
fn kind_by_columns(columns: &[&str]) -> super::kind::BatchKind {
    use super::kind::BatchKind as T;
    if columns.contains(&"registroCar") {
        T::Proprietario
    } else if columns.contains(&"proprietariosNomes") {
        T::Completo
    } else if columns.contains(&"codigoCar") {
        T::Car
    } else {
        T::Recibo
    }
}

/// The kind of lookup a record answers, from its answer's shape (the SDK's models: a
/// `proprietario` answer has `itens`, a complete one `dados.proprietariosNomes`); `None` for a
/// record without an answer (not found, error).
fn kind_of_record(r: &Record) -> Option<super::kind::BatchKind> {
    use super::kind::BatchKind as T;
    if r.file.is_some() {
        return Some(T::Recibo);
    }
    let v = r.response.as_ref()?;
    Some(if v.get("itens").is_some() {
        T::Proprietario
    } else if v.pointer("/dados/proprietariosNomes").is_some() {
        T::Completo
    } else {
        T::Car
    })
}

/// What the output file at `path` already holds, without changing it (nothing when the file does
/// not exist).
///
/// # Errors
/// Read errors other than "not found".
pub(crate) fn read_previous(path: &Path, format: FileFormat) -> io::Result<Previous> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let complete_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            Ok(previous(&bytes[..complete_len], format))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Previous::default()),
        Err(e) => Err(e),
    }
}

/// The records of JSON Lines contents (lines that are not records are skipped).
pub(crate) fn records_jsonl(bytes: &[u8]) -> Vec<Record> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Record>(l).ok())
        .collect()
}

/// The keys with a final answer in an output file's contents.
fn answered_keys(bytes: &[u8], format: FileFormat) -> HashSet<String> {
    previous(bytes, format).keys
}

/// The final answers in an output file's contents (the last record of a key wins).
pub(crate) fn previous(bytes: &[u8], format: FileFormat) -> Previous {
    let mut status = std::collections::HashMap::new();
    let mut kinds = vec![];
    let mut origin_columns = None;
    match format.records_format() {
        FileFormat::Csv => {
            let bytes = bytes.strip_prefix(BOM.as_bytes()).unwrap_or(bytes);
            let mut rd = csv::ReaderBuilder::new()
                .flexible(true)
                .delimiter(b';')
                .from_reader(bytes);
            let headers = rd.headers().cloned().unwrap_or_default();
            let col = |name: &str| headers.iter().position(|h| h == name);
            if let (Some(c), Some(s)) = (col("chave"), col("status")) {
                origin_columns = Some(col("origem").is_some());
                kinds.push(kind_by_columns(&headers.iter().collect::<Vec<_>>()));
                for rec in rd.records().flatten() {
                    let st = match rec.get(s) {
                        Some("encontrado") => BatchStatus::Found,
                        Some("nao_encontrado") => BatchStatus::NotFound,
                        _ => BatchStatus::Error,
                    };
                    if let Some(k) = rec.get(c) {
                        status.insert(k.to_owned(), st);
                    }
                }
            }
        }
        _ => {
            for r in records_jsonl(bytes) {
                if let Some(t) = kind_of_record(&r)
                    && !kinds.contains(&t)
                {
                    kinds.push(t);
                }
                status.insert(r.key, r.status);
            }
        }
    }
    status.retain(|_, st| st.is_final());
    let mut p = Previous::from_finals(status, kinds);
    p.origin_columns = origin_columns;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lote::BatchKind;

    fn r(key: &str, status: BatchStatus) -> Record {
        Record {
            key: key.into(),
            status,
            http_status: Some(200),
            error_code: None,
            message: None,
            cobrado: true,
            file: None,
            response: Some(serde_json::json!({"a": "x,y"})),
            origin: None,
            comprado_em: None,
        }
    }

    #[test]
    fn resume_reads_final_answers_and_cuts_a_partial_line() {
        for (name, format) in [("s.jsonl", FileFormat::Jsonl), ("s.csv", FileFormat::Csv)] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(name);
            assert_eq!(FileFormat::by_extension(&path), format);
            {
                let (f, fresh, prev) = open(&path, format).unwrap();
                assert!(fresh && prev.is_empty());
                let mut w =
                    RecordWriter::new(Box::new(f), format, BatchKind::Car, fresh, true, false)
                        .unwrap();
                w.append(&r("A", BatchStatus::Found)).unwrap();
                w.append(&r("B", BatchStatus::Error)).unwrap();
                w.append(&r("C", BatchStatus::NotFound)).unwrap();
            }
            // A crash in the middle of a line.
            let mut f = OpenOptions::new().append(true).open(&path).unwrap();
            f.write_all(b"{\"chave\":\"D\",\"sta").unwrap();
            drop(f);
            let (f, fresh, prev) = open(&path, format).unwrap();
            assert!(!fresh);
            assert_eq!(
                prev,
                HashSet::from(["A".to_owned(), "C".to_owned()]),
                "{name}"
            );
            let mut w =
                RecordWriter::new(Box::new(f), format, BatchKind::Car, fresh, true, false).unwrap();
            w.append(&r("B", BatchStatus::Found)).unwrap();
            drop(w);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains("\"sta\n") && !text.contains("\"D\""),
                "{text}"
            );
            let (_, _, prev) = open(&path, format).unwrap();
            assert_eq!(prev.len(), 3);
            if format == FileFormat::Csv {
                assert!(
                    text.starts_with("\u{feff}chave;status;httpStatus;"),
                    "{text}"
                );
                assert_eq!(text.matches("chave;status").count(), 1);
            }
        }
    }
}
