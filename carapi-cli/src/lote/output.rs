//! A batch's output file: one record per key, written and flushed as each answer arrives, and
//! read back on a rerun to skip the keys already answered.
//!
//! Format by the extension of `--saida`: `.csv` is a spreadsheet CSV with one column per field
//! (see [`super::exportar`]), `.xlsx` and `.geojson` are written whole from a hidden JSON Lines
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

pub use super::registro::{Anteriores, BOM, FormatoSaida, Resultado, StatusLote};

/// Writes records, one per line, flushed each time.
pub struct Escritor<'a> {
    w: Box<dyn Write + 'a>,
    formato: FormatoSaida,
    tipo: super::tipo::TipoLote,
}

impl std::fmt::Debug for Escritor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escritor")
            .field("formato", &self.formato)
            .finish()
    }
}

impl<'a> Escritor<'a> {
    /// A writer of `formato` records ([`FormatoSaida::registros`]) of a `tipo` batch over `w`;
    /// when `novo`, writes the CSV header, preceded by the BOM when `bom` (a file, not stdout).
    ///
    /// # Errors
    /// Write errors.
    pub fn new(
        w: Box<dyn Write + 'a>,
        formato: FormatoSaida,
        tipo: super::tipo::TipoLote,
        novo: bool,
        bom: bool,
    ) -> io::Result<Self> {
        let mut e = Escritor {
            w,
            formato: formato.registros(),
            tipo,
        };
        if novo && e.formato == FormatoSaida::Csv {
            if bom {
                e.w.write_all(BOM.as_bytes())?;
            }
            let header: Vec<String> = super::campos::colunas(tipo)
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
    pub fn escrever(&mut self, r: &Resultado) -> io::Result<()> {
        match self.formato {
            FormatoSaida::Csv => {
                for linha in super::campos::linhas(self.tipo, r) {
                    let fields: Vec<String> =
                        linha.iter().map(super::exportar::texto_csv).collect();
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

/// The kind of lookup of a CSV output with these column names: the columns of
/// [`super::campos::colunas`] that only that kind has.
fn tipo_por_colunas(colunas: &[&str]) -> super::tipo::TipoLote {
    use super::tipo::TipoLote as T;
    if colunas.contains(&"registroCar") {
        T::Proprietario
    } else if colunas.contains(&"proprietariosNomes") {
        T::Completo
    } else if colunas.contains(&"codigoCar") {
        T::Car
    } else {
        T::Recibo
    }
}

/// The kind of lookup a record answers, from its answer's shape (the SDK's models: a
/// `proprietario` answer has `itens`, a complete one `dados.proprietariosNomes`); `None` for a
/// record without an answer (not found, error).
fn tipo_do_registro(r: &Resultado) -> Option<super::tipo::TipoLote> {
    use super::tipo::TipoLote as T;
    if r.arquivo.is_some() {
        return Some(T::Recibo);
    }
    let v = r.resposta.as_ref()?;
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
pub fn ler_anteriores(path: &Path, formato: FormatoSaida) -> io::Result<Anteriores> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let completo = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            Ok(anteriores(&bytes[..completo], formato))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Anteriores::default()),
        Err(e) => Err(e),
    }
}

/// The records of JSON Lines contents (lines that are not records are skipped).
pub fn registros_jsonl(bytes: &[u8]) -> Vec<Resultado> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Resultado>(l).ok())
        .collect()
}

/// The keys with a final answer in an output file's contents.
pub fn respondidas(bytes: &[u8], formato: FormatoSaida) -> HashSet<String> {
    anteriores(bytes, formato).chaves
}

/// The final answers in an output file's contents (the last record of a key wins).
pub fn anteriores(bytes: &[u8], formato: FormatoSaida) -> Anteriores {
    let mut status = std::collections::HashMap::new();
    let mut tipos = vec![];
    match formato.registros() {
        FormatoSaida::Csv => {
            let bytes = bytes.strip_prefix(BOM.as_bytes()).unwrap_or(bytes);
            let mut rd = csv::ReaderBuilder::new()
                .flexible(true)
                .delimiter(b';')
                .from_reader(bytes);
            let headers = rd.headers().cloned().unwrap_or_default();
            let col = |name: &str| headers.iter().position(|h| h == name);
            if let (Some(c), Some(s)) = (col("chave"), col("status")) {
                tipos.push(tipo_por_colunas(&headers.iter().collect::<Vec<_>>()));
                for rec in rd.records().flatten() {
                    let st = match rec.get(s) {
                        Some("encontrado") => StatusLote::Encontrado,
                        Some("nao_encontrado") => StatusLote::NaoEncontrado,
                        _ => StatusLote::Erro,
                    };
                    if let Some(k) = rec.get(c) {
                        status.insert(k.to_owned(), st);
                    }
                }
            }
        }
        _ => {
            for r in registros_jsonl(bytes) {
                if let Some(t) = tipo_do_registro(&r)
                    && !tipos.contains(&t)
                {
                    tipos.push(t);
                }
                status.insert(r.chave, r.status);
            }
        }
    }
    status.retain(|_, st| st.is_final());
    Anteriores::de(status, tipos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lote::TipoLote;

    fn r(chave: &str, status: StatusLote) -> Resultado {
        Resultado {
            chave: chave.into(),
            status,
            http_status: Some(200),
            codigo_erro: None,
            message: None,
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
                let mut w = Escritor::new(Box::new(f), formato, TipoLote::Car, novo, true).unwrap();
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
            let mut w = Escritor::new(Box::new(f), formato, TipoLote::Car, novo, true).unwrap();
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
                assert!(
                    text.starts_with("\u{feff}chave;status;httpStatus;"),
                    "{text}"
                );
                assert_eq!(text.matches("chave;status").count(), 1);
            }
        }
    }
}
