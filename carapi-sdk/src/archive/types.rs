//! The archive's public values: its policy ([`ArchivePolicy`], [`Freshness`], [`Commit`]), its
//! entries ([`Entry`], [`Head`], [`Verification`]) and what a purchase appends ([`NewEntry`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;

use super::LegalBasis;
use crate::EndpointConsulta;

/// How long an archived answer may stand in for a new lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// An answer bought less than this long ago is reused (no request, no charge).
    MaxAge(Duration),
    /// Never reuse: every lookup buys (and is kept). Also the way to buy again an answer the
    /// archive holds (a handle made with [`Client::with_freshness`](crate::Client::with_freshness)).
    Never,
}

/// When a bought answer is returned to its caller: once its entry is committed (the default),
/// or at once with its append left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Commit {
    /// The lookup returns once the bought answer is committed to the archive, with its
    /// [`Answer::seq`](crate::Answer::seq), or with an [`Answer::warning`](crate::Answer::warning)
    /// saying why it could not be archived.
    #[default]
    Wait,
    /// The lookup returns as soon as the answer arrives; its append goes on in the purchase's
    /// task (a failure is a WARN event). The key stays claimed until the entry commits, so a
    /// second lookup of it, in this process or another, waits and reads the archive.
    Behind,
}

/// What the client declares for every lookup it archives, and when it reuses an answer.
///
/// The purpose (free text) and the legal basis are required:
/// [`ClientBuilder::archive`](crate::ClientBuilder::archive) refuses a blank purpose before any
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivePolicy {
    /// Why the data is looked up (LGPD art. 6, I: a specific, explicit purpose).
    pub purpose: String,
    /// The hypothesis of LGPD art. 7 or art. 11 the processing rests on.
    pub legal_basis: LegalBasis,
    /// When an archived answer is reused.
    pub freshness: Freshness,
}

impl ArchivePolicy {
    /// A policy with `purpose`, `legal_basis` and `freshness`.
    #[must_use]
    pub fn new(purpose: impl Into<String>, legal_basis: LegalBasis, freshness: Freshness) -> Self {
        Self {
            purpose: purpose.into(),
            legal_basis,
            freshness,
        }
    }
}

/// The last entry of the chain: keep it elsewhere and give it to
/// [`Archive::verify`](super::Archive::verify). Written `seq:hash` ([`fmt::Display`],
/// [`FromStr`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Head {
    /// Sequence number of the last entry (from 1).
    pub seq: u64,
    /// Its SHA-256, lower-case hex.
    pub hash: String,
}

impl fmt::Display for Head {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

impl FromStr for Head {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (seq, hash) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("cabeça inválida {s:?}: esperado <seq>:<hash>"))?;
        let seq = seq
            .parse()
            .map_err(|_| format!("cabeça inválida {s:?}: número de sequência"))?;
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "cabeça inválida {s:?}: hash de 64 dígitos hexadecimais"
            ));
        }
        Ok(Head {
            seq,
            hash: hash.to_ascii_lowercase(),
        })
    }
}

/// One archived lookup (its record; the body is read with [`Archive::body`](super::Archive::body)).
///
/// Serialised (JSON, the CSV export's header) with the contract's camelCase Portuguese names:
/// `seq`, `operacao`, `chave`, `preco`, `dataConsulta`, `compradoEm`, `conta`, `finalidade`,
/// `baseLegal`, `hashConteudo`, `hashAnterior`, `hash`, `expurgadoEm`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Entry {
    /// Sequence number in the chain (from 1).
    pub seq: u64,
    /// The lookup; serialised as its SDK name (`car`, `car_completo`, `proprietario`, `recibo`,
    /// [`EndpointConsulta::name`]), which the chain hashes.
    #[serde(rename = "operacao", serialize_with = "by_name")]
    pub consulta: EndpointConsulta,
    /// The key looked up, normalised (CAR code, bare document); `None` once purged.
    pub chave: Option<String>,
    /// The price charged, BRL; `None` when the account's prices were unknown.
    pub preco: Option<Decimal>,
    /// `dataConsulta` of the answer, as received (`None` for the receipt).
    pub data_consulta: Option<String>,
    /// When it was bought (the client's clock), UTC.
    #[serde(rename = "compradoEm")]
    pub bought_at: DateTime<Utc>,
    /// The account: the first 16 hex digits of the SHA-256 of its API key
    /// ([`fingerprint`](super::fingerprint)).
    pub conta: String,
    /// The declared purpose.
    #[serde(rename = "finalidade")]
    pub purpose: String,
    /// The declared legal basis ([`LegalBasis::as_str`]).
    #[serde(rename = "baseLegal")]
    pub legal_basis: String,
    /// SHA-256 of the key and the body (kept after a purge).
    #[serde(rename = "hashConteudo")]
    pub content_hash: String,
    /// The previous entry's hash.
    #[serde(rename = "hashAnterior")]
    pub prev_hash: String,
    /// This entry's hash.
    pub hash: String,
    /// When its content was purged, if it was.
    #[serde(rename = "expurgadoEm")]
    pub purged_at: Option<DateTime<Utc>>,
}

fn by_name<S: serde::Serializer>(c: &EndpointConsulta, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

/// The outcome of [`Archive::verify`](super::Archive::verify).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Verification {
    /// Entries walked.
    pub entries: u64,
    /// Entries whose content was purged (their hashes still checked).
    pub purged: u64,
    /// The chain's last entry as found now.
    pub head: Option<Head>,
    /// What does not hold, one line each (empty when the chain verifies).
    pub failures: Vec<String>,
}

impl Verification {
    /// True when nothing failed.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.failures.is_empty()
    }
}

/// What the client appends for one bought answer.
#[derive(Debug, Clone)]
pub(crate) struct NewEntry {
    pub(crate) consulta: EndpointConsulta,
    pub(crate) chave: String,
    pub(crate) body: Vec<u8>,
    pub(crate) preco: Option<Decimal>,
    pub(crate) data_consulta: Option<String>,
    pub(crate) bought_at: DateTime<Utc>,
    pub(crate) conta: String,
    pub(crate) purpose: String,
    pub(crate) legal_basis: LegalBasis,
    /// The bare documents the answer holds (its owners'; the key of an owner lookup).
    pub(crate) documentos: Vec<String>,
}

impl NewEntry {
    /// The documents of `body` (and the key of an owner lookup), for
    /// [`Archive::subject`](super::Archive::subject).
    pub(crate) fn with_documents(mut self) -> Self {
        let mut docs =
            super::documents::extract(&self.body, self.consulta == EndpointConsulta::Recibo);
        if self.consulta == EndpointConsulta::Proprietario {
            docs.push(self.chave.clone());
        }
        docs.sort();
        docs.dedup();
        self.documentos = docs;
        self
    }
}

/// The newest kept answer of a key: its entry and body.
pub(crate) type Kept = Option<(Entry, Vec<u8>)>;
