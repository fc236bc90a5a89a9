//! A batch's records: one JSON object per line per lookup, appended and flushed as each answer
//! arrives, read back on a rerun to skip the keys already answered, and compacted at the end of
//! every run. The canonical, resumable form of a batch (what the Python package's
//! `lote(saida=...)` reads and writes too):
//!
//! ```json
//! {"chave":"DF-...","status":"encontrado","httpStatus":200,"cobrado":true,"preco":1.0,"resposta":{...}}
//! {"chave":"DF-...","status":"nao_encontrado","httpStatus":404,"codigoErro":"CAR_NAO_ENCONTRADO","mensagem":"..."}
//! {"chave":"DF-...","status":"erro","httpStatus":503,"codigoErro":"SERVICO_INDISPONIVEL","mensagem":"..."}
//! ```
//!
//! The newest record of a key wins. `encontrado` and `nao_encontrado` are final answers: a rerun
//! with the same `--saida` skips them (so it never pays twice for a key); `erro` records (5xx,
//! network) are retried by a rerun. A line cut short by a crash is removed before appending.
//! At the end of every run ([`compact`]) the file is rewritten (a temporary file, then a rename,
//! under the run's lock) with one record per key, the newest, in input order.
//!
//! `--saida FILE.jsonl` (or any name that is not `.csv`, `.xlsx`, `.geojson`) is this file
//! itself; the other formats keep it hidden beside them ([`super::export::records_file`]).
//! Without `--saida`, records stream to stdout as JSON Lines, or CSV with `-o csv`/`-o csv-cru`
//! ([`Stream`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::columns::{ColumnValue, Layout};
pub(crate) use super::record::{BatchStatus, FileFormat, Previous, Record};

/// What [`RecordWriter`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// JSON Lines (the records file, or stdout).
    Jsonl,
    /// stdout, `-o csv`: the analyst's CSV (titles, `;`, decimal comma, Brasília time).
    Spreadsheet,
    /// stdout, `-o csv-cru`: the machine's CSV (field names, `,`, raw values).
    Raw,
}

/// Writes records as they arrive, flushed each time.
pub(crate) struct RecordWriter<'a> {
    w: Box<dyn Write + 'a>,
    stream: Stream,
    layout: Layout,
}

impl std::fmt::Debug for RecordWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordWriter")
            .field("stream", &self.stream)
            .finish()
    }
}

impl<'a> RecordWriter<'a> {
    /// A writer of `stream` over `w`; a CSV stream starts with its header (the columns of
    /// `layout`).
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn new(w: Box<dyn Write + 'a>, stream: Stream, layout: Layout) -> io::Result<Self> {
        let mut e = RecordWriter { w, stream, layout };
        match stream {
            Stream::Jsonl => {}
            Stream::Spreadsheet => {
                let header: Vec<String> = e.layout.titles();
                e.csv_line(&header)?;
            }
            Stream::Raw => {
                let header: Vec<String> = e.layout.names();
                e.csv_line(&header)?;
            }
        }
        Ok(e)
    }

    /// Appends one record and flushes.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn append(&mut self, r: &Record) -> io::Result<()> {
        let text: fn(&ColumnValue) -> String = match self.stream {
            Stream::Jsonl => {
                let mut line = serde_json::to_vec(r).map_err(io::Error::other)?;
                line.push(b'\n');
                self.w.write_all(&line)?;
                return self.w.flush();
            }
            Stream::Spreadsheet => ColumnValue::spreadsheet,
            Stream::Raw => ColumnValue::raw,
        };
        for row in self.layout.record_rows(r) {
            let fields: Vec<String> = row.iter().map(text).collect();
            self.csv_line(&fields)?;
        }
        Ok(())
    }

    fn csv_line(&mut self, fields: &[String]) -> io::Result<()> {
        let delimiter = if self.stream == Stream::Raw {
            b','
        } else {
            b';'
        };
        let mut buf = csv::WriterBuilder::new()
            .delimiter(delimiter)
            .from_writer(vec![]);
        buf.write_record(fields).map_err(io::Error::other)?;
        let bytes = buf
            .into_inner()
            .map_err(|e| io::Error::other(e.to_string()))?;
        self.w.write_all(&bytes)?;
        self.w.flush()
    }
}

/// Opens (or creates) the records file for appending, after cutting a trailing partial line.
///
/// # Errors
/// File-system errors.
pub(crate) fn open(path: &Path) -> io::Result<File> {
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
    }
    f.seek(SeekFrom::End(0))?;
    Ok(f)
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

/// The records at `path` (nothing when the file does not exist; lines that are not records,
/// such as one cut short by a crash, are skipped).
///
/// # Errors
/// Read errors other than "not found".
pub(crate) fn read(path: &Path) -> io::Result<Vec<Record>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(records_jsonl(&bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(e),
    }
}

/// The records of JSON Lines contents (lines that are not records are skipped).
fn records_jsonl(bytes: &[u8]) -> Vec<Record> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Record>(l).ok())
        .collect()
}

/// The final answers among `records` (the last record of a key wins).
pub(crate) fn previous(records: &[Record]) -> Previous {
    let mut status = HashMap::new();
    let mut kinds = vec![];
    for r in records {
        if let Some(t) = kind_of_record(r)
            && !kinds.contains(&t)
        {
            kinds.push(t);
        }
        status.insert(r.chave.clone(), r.status);
    }
    status.retain(|_, st: &mut BatchStatus| st.is_final());
    Previous::from_finals(status, kinds)
}

/// The newest record of each key, the keys of `order` (the input's) first and in its order,
/// then the others in the order they first appear.
pub(crate) fn newest(records: Vec<Record>, order: &[String]) -> Vec<Record> {
    let pos: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut first_seen: HashMap<String, usize> = HashMap::new();
    let mut latest: HashMap<String, Record> = HashMap::new();
    for (i, r) in records.into_iter().enumerate() {
        first_seen.entry(r.chave.clone()).or_insert(i);
        latest.insert(r.chave.clone(), r);
    }
    let mut v: Vec<Record> = latest.into_values().collect();
    v.sort_by_key(|r| {
        let known = pos.get(r.chave.as_str()).copied();
        (known.is_none(), known.unwrap_or(first_seen[&r.chave]))
    });
    v
}

/// Rewrites the records file at `path` with one record per key, the newest ([`newest`]),
/// atomically: a temporary file beside it, flushed to disk, then renamed over it. The caller
/// holds the batch's lock. Returns the records.
///
/// # Errors
/// File-system errors (the file is then left as it was).
pub(crate) fn compact(path: &Path, order: &[String]) -> io::Result<Vec<Record>> {
    let records = newest(read(path)?, order);
    let mut bytes = vec![];
    for r in &records {
        serde_json::to_writer(&mut bytes, r).map_err(io::Error::other)?;
        bytes.push(b'\n');
    }
    replace(path, &bytes)?;
    Ok(records)
}

/// Writes `bytes` to `path` atomically: `.<name>.tmp<pid>` beside it, flushed to disk, then
/// renamed over it.
///
/// # Errors
/// File-system errors (the temporary file removed).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The keys with a final answer in `records`, for tests.
#[cfg(test)]
fn answered(records: &[Record]) -> std::collections::HashSet<String> {
    previous(records).answered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(chave: &str, status: BatchStatus) -> Record {
        Record {
            chave: chave.into(),
            status,
            http_status: Some(200),
            error_code: None,
            message: None,
            cobrado: true,
            preco: Some(rust_decimal::Decimal::ONE),
            file: None,
            response: Some(serde_json::json!({"a": "x,y"})),
            origin: None,
            bought_at: None,
        }
    }

    #[test]
    fn resume_reads_final_answers_cuts_a_partial_line_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let layout = Layout::records(super::super::kind::BatchKind::Car, false);
        {
            let f = open(&path).unwrap();
            let mut w = RecordWriter::new(Box::new(f), Stream::Jsonl, layout.clone()).unwrap();
            w.append(&r("A", BatchStatus::Found)).unwrap();
            w.append(&r("B", BatchStatus::Error)).unwrap();
            w.append(&r("C", BatchStatus::NotFound)).unwrap();
        }
        // A crash in the middle of a line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"chave\":\"D\",\"sta").unwrap();
        drop(f);
        let f = open(&path).unwrap();
        assert_eq!(
            answered(&read(&path).unwrap()),
            std::collections::HashSet::from(["A".to_owned(), "C".to_owned()])
        );
        let mut w = RecordWriter::new(Box::new(f), Stream::Jsonl, layout).unwrap();
        w.append(&r("B", BatchStatus::Found)).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("\"D\"") && text.lines().count() == 4,
            "{text}"
        );
        let kept = compact(&path, &["C".to_owned(), "B".to_owned()]).unwrap();
        let chaves: Vec<&str> = kept.iter().map(|r| r.chave.as_str()).collect();
        assert_eq!(chaves, ["C", "B", "A"], "input order, then the others");
        assert_eq!(kept[1].status, BatchStatus::Found, "the newest record wins");
        assert_eq!(read(&path).unwrap(), kept);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .contains("\"preco\":1.0")
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }
}
