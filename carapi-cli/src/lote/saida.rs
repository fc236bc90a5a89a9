//! A batch's output file: one record per key, written and flushed as each answer arrives, and
//! read back on a rerun to skip the keys already answered.
//!
//! Format by the extension of `--saida`: `.csv` is CSV (header
//! `chave,status,http_status,codigo_erro,mensagem,cobrado,arquivo,resposta`, `resposta` holding the
//! API's JSON), anything else is JSON Lines, one object per line:
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

use serde::{Deserialize, Serialize};

/// The outcome of one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusLote {
    /// HTTP 200: the answer is in `resposta` (or the PDF in `arquivo`).
    Encontrado,
    /// HTTP 404: the registry has nothing for this key. Final.
    NaoEncontrado,
    /// Anything else (5xx, network): retried by a rerun.
    Erro,
}

impl StatusLote {
    /// True for answers a rerun must not ask again.
    pub fn is_final(self) -> bool {
        matches!(self, StatusLote::Encontrado | StatusLote::NaoEncontrado)
    }

    fn as_str(self) -> &'static str {
        match self {
            StatusLote::Encontrado => "encontrado",
            StatusLote::NaoEncontrado => "nao_encontrado",
            StatusLote::Erro => "erro",
        }
    }
}

/// One record of the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resultado {
    /// The normalised key.
    pub chave: String,
    /// Outcome.
    pub status: StatusLote,
    /// HTTP status, when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The API's error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codigo_erro: Option<String>,
    /// Error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mensagem: Option<String>,
    /// True when this lookup was charged (HTTP 200 outside the sandbox).
    #[serde(default)]
    pub cobrado: bool,
    /// The PDF saved (receipt batches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arquivo: Option<String>,
    /// The API's JSON answer (lookups other than the receipt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resposta: Option<serde_json::Value>,
}

const CSV_HEADER: [&str; 8] = [
    "chave",
    "status",
    "http_status",
    "codigo_erro",
    "mensagem",
    "cobrado",
    "arquivo",
    "resposta",
];

/// JSON Lines or CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatoSaida {
    /// One JSON object per line.
    Jsonl,
    /// CSV with a header.
    Csv,
}

impl FormatoSaida {
    /// By extension: `.csv` (any case) is CSV, anything else JSON Lines.
    pub fn por_extensao(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => FormatoSaida::Csv,
            _ => FormatoSaida::Jsonl,
        }
    }
}

/// Writes records, one per line, flushed each time.
pub struct Escritor<'a> {
    w: Box<dyn Write + 'a>,
    formato: FormatoSaida,
}

impl std::fmt::Debug for Escritor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escritor")
            .field("formato", &self.formato)
            .finish()
    }
}

impl<'a> Escritor<'a> {
    /// A writer over `w`; writes the CSV header when `novo`.
    ///
    /// # Errors
    /// Write errors.
    pub fn new(w: Box<dyn Write + 'a>, formato: FormatoSaida, novo: bool) -> io::Result<Self> {
        let mut e = Escritor { w, formato };
        if novo && formato == FormatoSaida::Csv {
            e.csv_line(&CSV_HEADER.map(str::to_owned))?;
        }
        Ok(e)
    }

    /// Appends one record and flushes.
    ///
    /// # Errors
    /// Write errors.
    pub fn escrever(&mut self, r: &Resultado) -> io::Result<()> {
        match self.formato {
            FormatoSaida::Jsonl => {
                let mut line = serde_json::to_vec(r).map_err(io::Error::other)?;
                line.push(b'\n');
                self.w.write_all(&line)?;
                self.w.flush()
            }
            FormatoSaida::Csv => {
                let fields = [
                    r.chave.clone(),
                    r.status.as_str().to_owned(),
                    r.http_status.map(|s| s.to_string()).unwrap_or_default(),
                    r.codigo_erro.clone().unwrap_or_default(),
                    r.mensagem.clone().unwrap_or_default(),
                    r.cobrado.to_string(),
                    r.arquivo.clone().unwrap_or_default(),
                    r.resposta
                        .as_ref()
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                ];
                self.csv_line(&fields)
            }
        }
    }

    fn csv_line(&mut self, fields: &[String]) -> io::Result<()> {
        let mut buf = csv::Writer::from_writer(vec![]);
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
pub fn abrir(path: &Path, formato: FormatoSaida) -> io::Result<(File, bool, HashSet<String>)> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let mut bytes = vec![];
    f.read_to_end(&mut bytes)?;
    let completo = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if completo < bytes.len() {
        f.set_len(completo as u64)?;
        bytes.truncate(completo);
    }
    f.seek(SeekFrom::End(0))?;
    let respondidas = respondidas(&bytes, formato);
    Ok((f, bytes.is_empty(), respondidas))
}

/// The keys already answered in the output file at `path`, without changing it (none when the
/// file does not exist).
///
/// # Errors
/// Read errors other than "not found".
pub fn ler_respondidas(path: &Path, formato: FormatoSaida) -> io::Result<HashSet<String>> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let completo = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            Ok(respondidas(&bytes[..completo], formato))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(HashSet::new()),
        Err(e) => Err(e),
    }
}

/// The keys with a final answer in an output file's contents.
pub fn respondidas(bytes: &[u8], formato: FormatoSaida) -> HashSet<String> {
    let mut set = HashSet::new();
    match formato {
        FormatoSaida::Jsonl => {
            for line in bytes.split(|&b| b == b'\n') {
                if let Ok(r) = serde_json::from_slice::<Resultado>(line)
                    && r.status.is_final()
                {
                    set.insert(r.chave);
                }
            }
        }
        FormatoSaida::Csv => {
            let mut rd = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
            let headers = rd.headers().cloned().unwrap_or_default();
            let col = |name: &str| headers.iter().position(|h| h == name);
            if let (Some(c), Some(s)) = (col("chave"), col("status")) {
                for rec in rd.records().flatten() {
                    if matches!(rec.get(s), Some("encontrado" | "nao_encontrado"))
                        && let Some(k) = rec.get(c)
                    {
                        set.insert(k.to_owned());
                    }
                }
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(chave: &str, status: StatusLote) -> Resultado {
        Resultado {
            chave: chave.into(),
            status,
            http_status: Some(200),
            codigo_erro: None,
            mensagem: None,
            cobrado: true,
            arquivo: None,
            resposta: Some(serde_json::json!({"a": "x,y"})),
        }
    }

    #[test]
    fn resume_reads_final_answers_and_cuts_a_partial_line() {
        for (name, formato) in [
            ("s.jsonl", FormatoSaida::Jsonl),
            ("s.csv", FormatoSaida::Csv),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(name);
            assert_eq!(FormatoSaida::por_extensao(&path), formato);
            {
                let (f, novo, prev) = abrir(&path, formato).unwrap();
                assert!(novo && prev.is_empty());
                let mut w = Escritor::new(Box::new(f), formato, novo).unwrap();
                w.escrever(&r("A", StatusLote::Encontrado)).unwrap();
                w.escrever(&r("B", StatusLote::Erro)).unwrap();
                w.escrever(&r("C", StatusLote::NaoEncontrado)).unwrap();
            }
            // A crash in the middle of a line.
            let mut f = OpenOptions::new().append(true).open(&path).unwrap();
            f.write_all(b"{\"chave\":\"D\",\"sta").unwrap();
            drop(f);
            let (f, novo, prev) = abrir(&path, formato).unwrap();
            assert!(!novo);
            assert_eq!(
                prev,
                HashSet::from(["A".to_owned(), "C".to_owned()]),
                "{name}"
            );
            let mut w = Escritor::new(Box::new(f), formato, novo).unwrap();
            w.escrever(&r("B", StatusLote::Encontrado)).unwrap();
            drop(w);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains("\"sta\n") && !text.contains("\"D\""),
                "{text}"
            );
            let (_, _, prev) = abrir(&path, formato).unwrap();
            assert_eq!(prev.len(), 3);
            if formato == FormatoSaida::Csv {
                assert!(text.starts_with("chave,status,http_status,"));
                assert_eq!(text.matches("chave,status").count(), 1);
            }
        }
    }
}
