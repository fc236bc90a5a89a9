//! The hash chain: each entry's SHA-256 covers its content's hash, its record (operation,
//! price, dates, account, purpose, legal basis) and the previous entry's hash.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::{ArchiveError, Entry, Head, NewEntry, Verification};
use crate::EndpointConsulta;

/// The `prev_hash` of the first entry: 64 zeros.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// SHA-256 of the looked-up key and the exact body bytes (length-prefixed key).
pub(crate) fn content_hash(chave: &str, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"carapi-acervo-conteudo-v1\n");
    h.update(chave.len().to_string().as_bytes());
    h.update(b":");
    h.update(chave.as_bytes());
    h.update(body);
    hex(&h.finalize())
}

/// The record of one entry as the chain hashes it.
#[derive(Debug, Clone)]
pub(crate) struct Record<'a> {
    pub(crate) seq: i64,
    pub(crate) operation: &'a str,
    pub(crate) preco: Option<&'a str>,
    pub(crate) data_consulta: Option<&'a str>,
    pub(crate) bought_at: &'a str,
    pub(crate) account: &'a str,
    pub(crate) purpose: &'a str,
    pub(crate) legal_basis: &'a str,
    pub(crate) content_hash: &'a str,
    pub(crate) prev_hash: &'a str,
}

impl Record<'_> {
    /// The entry's hash: SHA-256 over its fields, each length-prefixed, in a fixed order.
    pub(crate) fn hash(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"carapi-acervo-entrada-v1\n");
        let seq = self.seq.to_string();
        for field in [
            seq.as_str(),
            self.operation,
            self.preco.unwrap_or("-"),
            self.data_consulta.unwrap_or("-"),
            self.bought_at,
            self.account,
            self.purpose,
            self.legal_basis,
            self.content_hash,
            self.prev_hash,
        ] {
            h.update(field.len().to_string().as_bytes());
            h.update(b":");
            h.update(field.as_bytes());
            h.update(b"\n");
        }
        hex(&h.finalize())
    }
}

/// The fingerprint of an API key: the first 16 hex digits of its SHA-256 (the key itself is
/// never stored). The `account` of every [`Entry`] bought with that key.
#[must_use]
pub fn fingerprint(api_key: &str) -> String {
    let mut s = hex(&Sha256::digest(api_key.trim().as_bytes()));
    s.truncate(16);
    s
}

/// The entry `new` becomes at `seq` after `prev_hash` (written by both stores the same way).
pub(crate) fn seal(new: &NewEntry, seq: i64, prev_hash: String, bought_at: &str) -> Entry {
    let preco = new.preco.map(|p| p.to_string());
    let content_hash = content_hash(&new.chave, &new.body);
    let hash = Record {
        seq,
        operation: new.consulta.name(),
        preco: preco.as_deref(),
        data_consulta: new.data_consulta.as_deref(),
        bought_at,
        account: &new.conta,
        purpose: &new.purpose,
        legal_basis: new.legal_basis.as_str(),
        content_hash: &content_hash,
        prev_hash: &prev_hash,
    }
    .hash();
    Entry {
        seq: seq.unsigned_abs(),
        consulta: new.consulta,
        chave: Some(new.chave.clone()),
        preco: new.preco,
        data_consulta: new.data_consulta.clone(),
        bought_at: parse_instant(bought_at),
        conta: new.conta.clone(),
        purpose: new.purpose.clone(),
        legal_basis: new.legal_basis.as_str().to_owned(),
        content_hash,
        prev_hash,
        hash,
        purged_at: None,
    }
}

/// Walks the whole chain `all` (oldest first): every hash recomputed, every kept content
/// (`body` of a seq) re-hashed, and the kept head (when given) found at its place.
pub(crate) fn walk(
    all: &[Entry],
    mut body: impl FnMut(u64) -> Result<Option<Vec<u8>>, ArchiveError>,
    kept: Option<&Head>,
) -> Result<Verification, ArchiveError> {
    let mut v = Verification {
        entries: all.len() as u64,
        purged: 0,
        head: None,
        failures: Vec::new(),
    };
    let mut prev = GENESIS.to_owned();
    let mut expected_seq = 1u64;
    for e in all {
        if e.seq != expected_seq {
            v.failures.push(format!(
                "entrada {expected_seq}: ausente (a seguinte é {})",
                e.seq
            ));
        }
        expected_seq = e.seq + 1;
        if e.prev_hash != prev {
            v.failures
                .push(format!("entrada {}: não encadeia com a anterior", e.seq));
        }
        if record_of(e).hash() != e.hash {
            v.failures.push(format!(
                "entrada {}: registro alterado (hash não confere)",
                e.seq
            ));
        }
        match (body(e.seq)?, &e.chave, e.purged_at) {
            (Some(b), Some(chave), _) => {
                if content_hash(chave, &b) != e.content_hash {
                    v.failures.push(format!(
                        "entrada {}: conteúdo alterado (hash não confere)",
                        e.seq
                    ));
                }
            }
            (_, _, Some(_)) => v.purged += 1,
            _ => v.failures.push(format!(
                "entrada {}: conteúdo ausente sem expurgo registrado",
                e.seq
            )),
        }
        prev.clone_from(&e.hash);
    }
    v.head = all.last().map(|e| Head {
        seq: e.seq,
        hash: e.hash.clone(),
    });
    if let Some(k) = kept {
        match all.iter().find(|e| e.seq == k.seq) {
            None => v.failures.push(format!(
                "cabeça guardada {k}: a entrada {} não existe (acervo truncado)",
                k.seq
            )),
            Some(e) if e.hash != k.hash => v.failures.push(format!(
                "cabeça guardada {k}: a entrada {} tem outro hash (cadeia refeita ou alterada)",
                k.seq
            )),
            Some(_) => {}
        }
    }
    Ok(v)
}

/// The hash of `e` recomputed from its stored record.
fn record_of(e: &Entry) -> RecordOwned {
    RecordOwned {
        seq: i64::try_from(e.seq).unwrap_or(i64::MAX),
        operation: e.consulta.name(),
        preco: e.preco.map(|p| p.to_string()),
        data_consulta: e.data_consulta.clone(),
        bought_at: instant(e.bought_at),
        account: e.conta.clone(),
        purpose: e.purpose.clone(),
        legal_basis: e.legal_basis.clone(),
        content_hash: e.content_hash.clone(),
        prev_hash: e.prev_hash.clone(),
    }
}

/// A [`Record`] owning its fields.
struct RecordOwned {
    seq: i64,
    operation: &'static str,
    preco: Option<String>,
    data_consulta: Option<String>,
    bought_at: String,
    account: String,
    purpose: String,
    legal_basis: String,
    content_hash: String,
    prev_hash: String,
}

impl RecordOwned {
    fn hash(&self) -> String {
        Record {
            seq: self.seq,
            operation: self.operation,
            preco: self.preco.as_deref(),
            data_consulta: self.data_consulta.as_deref(),
            bought_at: &self.bought_at,
            account: &self.account,
            purpose: &self.purpose,
            legal_basis: &self.legal_basis,
            content_hash: &self.content_hash,
            prev_hash: &self.prev_hash,
        }
        .hash()
    }
}

/// Checks an entry about to be served with its body: the content's hash (key and body) and
/// the entry's own hash (its record) must both still match, or the entry was altered after it
/// was written (a few microseconds; the whole chain is [`walk`]'s).
///
/// # Errors
/// [`ArchiveError`] of kind `Tampered`, naming the entry.
pub(crate) fn check_entry(e: &Entry, body: &[u8]) -> Result<(), ArchiveError> {
    let content = e
        .chave
        .as_deref()
        .is_some_and(|chave| content_hash(chave, body) == e.content_hash);
    if content && record_of(e).hash() == e.hash {
        Ok(())
    } else {
        Err(ArchiveError::tampered(e.seq))
    }
}

/// The lookup named `name` in a stored entry.
///
/// # Errors
/// [`ArchiveError`] when the name is none of the four lookups (a newer writer's, or an edit).
pub(crate) fn consulta_of(name: &str) -> Result<EndpointConsulta, ArchiveError> {
    EndpointConsulta::from_name(name)
        .ok_or_else(|| ArchiveError::plain("ler a operação de uma entrada"))
}

/// The fixed-width UTC form the archive writes (sorts as text).
pub(crate) fn instant(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

pub(crate) fn parse_instant(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).map_or(DateTime::<Utc>::MIN_UTC, |t| t.with_timezone(&Utc))
}
