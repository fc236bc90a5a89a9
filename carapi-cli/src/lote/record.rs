//! A batch record and the output formats: the types [`super::saida`] (writing and resuming),
//! [`super::campos`] (columns) and [`super::exportar`] (spreadsheet and map) all use. A leaf
//! module, so those three depend on each other one way only: `saida` → `exportar` → `campos` →
//! `registro`.

use std::collections::HashSet;
use std::path::Path;

use rust_decimal::Decimal;
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

    /// The name in the output (`encontrado`, `nao_encontrado`, `erro`).
    pub fn as_str(self) -> &'static str {
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
    #[serde(rename = "mensagem", default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
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

/// The format of a batch's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatoSaida {
    /// One JSON object per line.
    Jsonl,
    /// CSV for spreadsheets: `;`, decimal comma, one column per field, a header.
    Csv,
    /// Excel workbook (written at the end of each run).
    Xlsx,
    /// GeoJSON FeatureCollection (written at the end of each run).
    Geojson,
}

impl FormatoSaida {
    /// By extension (any case): `.csv`, `.xlsx`, `.geojson`; anything else JSON Lines.
    pub fn por_extensao(path: &Path) -> Self {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "csv" => FormatoSaida::Csv,
            "xlsx" => FormatoSaida::Xlsx,
            "geojson" => FormatoSaida::Geojson,
            _ => FormatoSaida::Jsonl,
        }
    }

    /// How records are stored as they arrive: CSV appends CSV, every other format JSON Lines.
    pub fn registros(self) -> FormatoSaida {
        match self {
            FormatoSaida::Csv => FormatoSaida::Csv,
            _ => FormatoSaida::Jsonl,
        }
    }
}

pub use crate::format::BOM;

/// What an output file already holds: the keys with a final answer, the counts a cumulative
/// summary adds to this run's, and the kinds of lookup its records answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anteriores {
    /// Keys with a final answer (`encontrado`, `nao_encontrado`): skipped by a rerun.
    pub chaves: HashSet<String>,
    /// `encontrado` records.
    pub encontrados: usize,
    /// `nao_encontrado` records.
    pub nao_encontrados: usize,
    /// The kinds of lookup the file answers (from the CSV header, or each answer's shape); a
    /// batch of another kind must not resume into it.
    pub tipos: Vec<super::tipo::TipoLote>,
    finais: std::collections::HashMap<String, StatusLote>,
}

impl Anteriores {
    /// Only the keys of `chaves` (the current input): what the summary of this input counts.
    pub fn da_entrada(&self, chaves: &[String]) -> Anteriores {
        let finais: std::collections::HashMap<String, StatusLote> = chaves
            .iter()
            .filter_map(|k| self.finais.get(k).map(|s| (k.clone(), *s)))
            .collect();
        Anteriores::de(finais, self.tipos.clone())
    }

    /// What the final answers `finais` (by key) and the kinds `tipos` of a file make.
    pub(super) fn de(
        finais: std::collections::HashMap<String, StatusLote>,
        tipos: Vec<super::tipo::TipoLote>,
    ) -> Self {
        let conta = |st| finais.values().filter(|s| **s == st).count();
        Anteriores {
            chaves: finais.keys().cloned().collect(),
            encontrados: conta(StatusLote::Encontrado),
            nao_encontrados: conta(StatusLote::NaoEncontrado),
            tipos,
            finais,
        }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resumo {
    /// HTTP 200 answers.
    pub encontrados: usize,
    /// 404 answers.
    pub nao_encontrados: usize,
    /// Invalid input keys.
    pub invalidos: usize,
    /// Keys whose lookup failed (5xx, network): retried by a rerun.
    pub erros: usize,
    /// Keys not sent because the batch stopped.
    pub nao_enviados: usize,
    /// Total charged by this run, BRL.
    pub cobrado: Decimal,
}
