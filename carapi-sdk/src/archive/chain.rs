//! The hash chain: each entry's SHA-256 covers its content's hash, its record (operation,
//! price, dates, account, purpose, legal basis) and the previous entry's hash.

use sha2::{Digest, Sha256};

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
/// never stored).
pub(crate) fn fingerprint(api_key: &str) -> String {
    let mut s = hex(&Sha256::digest(api_key.trim().as_bytes()));
    s.truncate(16);
    s
}
