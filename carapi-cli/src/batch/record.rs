//! A batch record and the output formats: the types [`super::output`] (writing and resuming),
//! [`super::columns`] (columns) and [`super::export`] (spreadsheet and map) all use. A leaf
//! module, so those three depend on each other one way only: `export` → `columns` → `record`,
//! `output` → `record`.

use std::collections::HashSet;
use std::path::Path;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// The outcome of one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum BatchStatus {
    /// HTTP 200: the answer is in `resposta` (or the PDF in `arquivo`).
    #[serde(rename = "encontrado")]
    Found,
    /// HTTP 404: the registry has nothing for this key. Final.
    #[serde(rename = "nao_encontrado")]
    NotFound,
    /// Anything else (5xx, network): retried by a rerun.
    #[serde(rename = "erro")]
    Error,
}

impl BatchStatus {
    /// True for answers a rerun must not ask again.
    pub(crate) fn is_final(self) -> bool {
        matches!(self, BatchStatus::Found | BatchStatus::NotFound)
    }

    /// The name in the output (`encontrado`, `nao_encontrado`, `erro`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BatchStatus::Found => "encontrado",
            BatchStatus::NotFound => "nao_encontrado",
            BatchStatus::Error => "erro",
        }
    }
}

/// One record of the JSON Lines records: one lookup's outcome. Its names in the file (`chave`,
/// `status`, `httpStatus`, `codigoErro`, `mensagem`, `cobrado`, `preco`, `arquivo`,
/// `resposta`, `origem`, `compradoEm`: the contract's camelCase Portuguese) are what `carapi
/// lote --ajuda` documents and what a rerun reads back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    /// The normalised key.
    pub(crate) chave: String,
    /// Outcome.
    pub(crate) status: BatchStatus,
    /// HTTP status, when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) http_status: Option<u16>,
    /// The API's error code.
    #[serde(
        rename = "codigoErro",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) error_code: Option<String>,
    /// Error message.
    #[serde(rename = "mensagem", default, skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
    /// True when this lookup was charged (HTTP 200 outside the sandbox).
    #[serde(default)]
    pub(crate) cobrado: bool,
    /// What it was charged, BRL (the account's price of the lookup): only when `cobrado` and
    /// the price is known; a JSON number, as the contract writes amounts.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "rust_decimal::serde::float_option"
    )]
    pub(crate) preco: Option<Decimal>,
    /// The PDF saved (receipt batches).
    #[serde(rename = "arquivo", default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    /// The API's JSON answer (lookups other than the receipt).
    #[serde(rename = "resposta", default, skip_serializing_if = "Option::is_none")]
    pub(crate) response: Option<serde_json::Value>,
    /// With the archive configured, where the answer came from: `api` (bought now) or
    /// `acervo` (no request, no charge).
    #[serde(rename = "origem", default, skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<String>,
    /// With the archive configured, when the answer was bought (UTC).
    #[serde(
        rename = "compradoEm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) bought_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl Record {
    /// A record of `chave` with `status` and nothing else: no HTTP status, no answer, not
    /// charged.
    pub(crate) fn new(chave: impl Into<String>, status: BatchStatus) -> Record {
        Record {
            chave: chave.into(),
            status,
            http_status: None,
            error_code: None,
            message: None,
            cobrado: false,
            preco: None,
            file: None,
            response: None,
            origin: None,
            bought_at: None,
        }
    }
}

/// The format of a batch's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileFormat {
    /// One JSON object per line.
    Jsonl,
    /// CSV for spreadsheets: `;`, decimal comma, one column per field, a header (written at
    /// the end of each run).
    Csv,
    /// Excel workbook (written at the end of each run).
    Xlsx,
    /// GeoJSON FeatureCollection (written at the end of each run).
    Geojson,
}

impl FileFormat {
    /// By extension (any case): `.csv`, `.xlsx`, `.geojson`; anything else JSON Lines.
    pub(crate) fn by_extension(path: &Path) -> Self {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "csv" => FileFormat::Csv,
            "xlsx" => FileFormat::Xlsx,
            "geojson" => FileFormat::Geojson,
            _ => FileFormat::Jsonl,
        }
    }

    /// True for the formats written whole at the end of each run from a hidden JSON Lines
    /// file of records (`.csv`, `.xlsx`, `.geojson`); `.jsonl` is its own records file.
    pub(crate) fn is_rendered(self) -> bool {
        self != FileFormat::Jsonl
    }
}

pub(crate) use crate::format::BYTE_ORDER_MARK;

/// What an output's records already hold: the keys with a final answer, the counts a
/// cumulative summary adds to this run's, and the kinds of lookup its records answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Previous {
    /// Keys with a final answer (`encontrado`, `nao_encontrado`): skipped by a rerun.
    pub(crate) answered: HashSet<String>,
    /// `encontrado` records.
    pub(crate) found: usize,
    /// `nao_encontrado` records.
    pub(crate) not_found: usize,
    /// The kinds of lookup the records answer (each answer's shape); a batch of another kind
    /// must not resume into it.
    pub(crate) kinds: Vec<super::kind::BatchKind>,
    finals: std::collections::HashMap<String, BatchStatus>,
}

impl Previous {
    /// Only the keys of `chaves` (the current input): what the summary of this input counts.
    pub(crate) fn of_input(&self, chaves: &[String]) -> Previous {
        let finals: std::collections::HashMap<String, BatchStatus> = chaves
            .iter()
            .filter_map(|k| self.finals.get(k).map(|s| (k.clone(), *s)))
            .collect();
        Previous::from_finals(finals, self.kinds.clone())
    }

    /// What the final answers `finals` (by key) and the kinds `kinds` of a file make.
    pub(super) fn from_finals(
        finals: std::collections::HashMap<String, BatchStatus>,
        kinds: Vec<super::kind::BatchKind>,
    ) -> Self {
        let count = |st| finals.values().filter(|s| **s == st).count();
        Previous {
            answered: finals.keys().cloned().collect(),
            found: count(BatchStatus::Found),
            not_found: count(BatchStatus::NotFound),
            kinds,
            finals,
        }
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// HTTP 200 answers.
    pub(crate) found: usize,
    /// 404 answers.
    pub(crate) not_found: usize,
    /// Invalid input keys.
    pub(crate) invalid: usize,
    /// Keys whose lookup failed (5xx, network): retried by a rerun.
    pub(crate) errors: usize,
    /// Keys not sent because the batch stopped.
    pub(crate) not_sent: usize,
    /// Total charged by this run, BRL.
    pub(crate) cobrado: Decimal,
}
