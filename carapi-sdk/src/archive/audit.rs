//! The audit tools of the archive (they block the calling thread while they run): the chain's
//! head and verification, the lists of entries (all, an account's, a data subject's), the
//! purges (LGPD art. 18, VI), the exports of the record of processing (art. 37), and the
//! freshness rule.

use std::io::Write;

use chrono::{DateTime, Utc};

use super::store::Filter;
use super::{Archive, ArchiveError, Entry, Freshness, Head, Verification, chain, export};
use crate::{CpfCnpj, EndpointConsulta};

impl Archive {
    /// The chain's last entry; `None` while the archive is empty.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn head(&self) -> Result<Option<Head>, ArchiveError> {
        let last = self.core.store.select(Filter::Last)?.pop();
        Ok(last.map(|e| Head {
            seq: e.seq,
            hash: e.hash,
        }))
    }

    /// Walks the chain: recomputes every entry's hash and every kept content's hash, checks
    /// each entry points at the one before and none is missing, and, with `kept`, that the
    /// head kept elsewhere is still in the chain with the same hash (which detects a removed
    /// newest entry and a chain recomputed from scratch).
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read (a chain that does not verify is an
    /// `Ok` whose [`Verification::failures`] say why).
    pub fn verify(&self, kept: Option<&Head>) -> Result<Verification, ArchiveError> {
        self.core.store.verify(kept)
    }

    /// Every entry, oldest first.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn entries(&self) -> Result<Vec<Entry>, ArchiveError> {
        self.core.store.select(Filter::All)
    }

    /// The entries bought by the account `fingerprint` names
    /// ([`fingerprint`](crate::archive::fingerprint) of its key), with those of every key
    /// linked to it ([`Archive::link_contas`]: after a key rotation, both fingerprints list the
    /// same entries), oldest first.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn conta_entries(&self, fingerprint: &str) -> Result<Vec<Entry>, ArchiveError> {
        let fingerprint = fingerprint.trim().to_ascii_lowercase();
        self.core.store.select(Filter::Conta(&fingerprint))
    }

    /// Records that the key of fingerprint `new` belongs to the account of fingerprint `old`
    /// (a rotated key: the API names no account, so the caller who holds both keys says so).
    /// From then on [`Archive::conta_entries`] of either lists the entries of both. Links
    /// are transitive (a second rotation links the third key to the first).
    ///
    /// # Errors
    /// [`ArchiveError`] when a fingerprint is not 16 hex digits or the archive cannot be
    /// written.
    pub fn link_contas(&self, old: &str, new: &str) -> Result<(), ArchiveError> {
        let (old, new) = (
            old.trim().to_ascii_lowercase(),
            new.trim().to_ascii_lowercase(),
        );
        for fp in [&old, &new] {
            if fp.len() != 16 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ArchiveError::plain(
                    "vincular contas: a impressão de uma chave tem 16 dígitos hexadecimais",
                ));
            }
        }
        if old == new {
            return Ok(());
        }
        self.core.store.link(&old, &new)
    }

    /// The fingerprints linked to `fingerprint`'s account, itself included, sorted.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn linked_contas(&self, fingerprint: &str) -> Result<Vec<String>, ArchiveError> {
        let fingerprint = fingerprint.trim().to_ascii_lowercase();
        self.core.store.linked(&fingerprint)
    }

    /// The entry `seq`, if any.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn entry(&self, seq: u64) -> Result<Option<Entry>, ArchiveError> {
        Ok(self.core.store.select(Filter::Seq(seq))?.pop())
    }

    /// The exact body bytes of entry `seq` (JSON, or the receipt PDF); `None` once purged.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn body(&self, seq: u64) -> Result<Option<Vec<u8>>, ArchiveError> {
        self.core.store.body(seq)
    }

    /// Every entry holding `documento` (a data subject's access request, LGPD art. 18, II):
    /// owner lookups of it, and complete answers and receipts that name it as an owner.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn subject(&self, documento: &CpfCnpj) -> Result<Vec<Entry>, ArchiveError> {
        self.core.store.select(Filter::Holding(documento.as_str()))
    }

    /// When `documento` was purged at its owner's request ([`Archive::purge_documento`]),
    /// oldest first; empty when it never was.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive or the purge key's file cannot be read.
    pub fn purges_of(&self, documento: &CpfCnpj) -> Result<Vec<DateTime<Utc>>, ArchiveError> {
        match self.core.purge_key(false)? {
            Some(key) => self.core.store.purges(&key.tag(documento.as_str())),
            None => Ok(Vec::new()),
        }
    }

    /// Removes the content (key, body, documents) of every entry holding `documento` (LGPD
    /// art. 18, VI), keeping each entry's record (operation, price, dates, purpose, legal
    /// basis) and hashes: [`Archive::verify`] still passes. Remembers the purge (a keyed hash of
    /// the document, see the [module docs](crate::archive)): an owner lookup of the document is
    /// then refused before anything is sent, unless allowed explicitly. Returns how many
    /// entries.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive or the purge key's file cannot be written.
    pub fn purge_documento(&self, documento: &CpfCnpj) -> Result<usize, ArchiveError> {
        let tag = self
            .core
            .purge_key(true)?
            .map(|k| k.tag(documento.as_str()));
        self.core.store.purge(
            Filter::Holding(documento.as_str()),
            tag.as_deref(),
            Utc::now(),
        )
    }

    /// Removes the content of every entry bought before `before` (see
    /// [`Archive::purge_documento`]; no document is remembered). Returns how many entries.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be written.
    pub fn purge_before(&self, before: DateTime<Utc>) -> Result<usize, ArchiveError> {
        let before = chain::instant(before);
        self.core
            .store
            .purge(Filter::Before(&before), None, Utc::now())
    }

    /// Writes every entry's record as a JSON array (for an auditor: what, when, price, purpose,
    /// legal basis, hash; no bodies), with [`Entry`]'s names.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read or `out` written.
    pub fn export_json(&self, out: impl Write) -> Result<(), ArchiveError> {
        export::json(&self.entries()?, out)
    }

    /// Writes every entry's record as CSV (header line first; the columns and names of the
    /// JSON).
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read or `out` written.
    pub fn export_csv(&self, out: impl Write) -> Result<(), ArchiveError> {
        export::csv(&self.entries()?, out)
    }

    /// The newest entry still holding its answer for `consulta` and `chave` (normalised:
    /// [`crate::CodigoCar::as_str`], [`CpfCnpj::as_str`]): what a lookup would be answered
    /// with, e.g. to preview a batch. Blocks the calling thread while it reads.
    ///
    /// # Errors
    /// [`ArchiveError`] when the archive cannot be read.
    pub fn latest_entry(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> Result<Option<Entry>, ArchiveError> {
        let latest = self
            .core
            .store
            .select(Filter::Holding(chave))?
            .into_iter()
            .rfind(|e| e.consulta == consulta && e.chave.as_deref() == Some(chave));
        Ok(latest)
    }

    /// True when `entry` is young enough under `freshness` to answer a lookup, now.
    #[must_use]
    pub fn is_fresh(entry: &Entry, freshness: Freshness) -> bool {
        Self::is_fresh_at(entry, freshness, Utc::now())
    }

    /// True when `entry` is young enough under `freshness` to answer a lookup at `now` (the
    /// one freshness rule: an answer bought less than the maximum age before `now`).
    #[must_use]
    pub fn is_fresh_at(entry: &Entry, freshness: Freshness, now: DateTime<Utc>) -> bool {
        match freshness {
            Freshness::Never => false,
            Freshness::MaxAge(max) => now
                .signed_duration_since(entry.bought_at)
                .to_std()
                .is_ok_and(|age| age < max),
        }
    }
}
