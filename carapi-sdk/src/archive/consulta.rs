//! What a lookup does with the archive (the client's side, not public): the newest answer of a
//! key, this process's flight and the claim across processes, the append, the purge checks,
//! and the check of an answer about to be served.

use chrono::{DateTime, Utc};

use super::flights::Flight;
use super::store::{self, Claim};
use super::{Archive, ArchiveError, Entry, Kept, NewEntry, chain, documents};
use crate::EndpointConsulta;

impl Archive {
    /// The newest kept answer of `consulta` for `chave` (the lookup's path).
    pub(crate) async fn latest(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> Result<Kept, ArchiveError> {
        self.core.store.latest(consulta, chave).await
    }

    /// Waits for, then holds, this process's flight of `consulta` + `chave`.
    pub(crate) async fn flight(&self, consulta: EndpointConsulta, chave: &str) -> Flight {
        self.core.flights.take(consulta, chave).await
    }

    /// Waits for, then holds, the key across processes (see "One purchase per key").
    pub(crate) async fn claim(
        &self,
        consulta: EndpointConsulta,
        chave: &str,
    ) -> Result<Box<dyn Claim>, ArchiveError> {
        self.core.store.claim(consulta, chave).await
    }

    /// Appends `new` without a claim: queued at once (a read of this process waits for it),
    /// the future gives its entry once committed.
    pub(crate) fn append(&self, new: NewEntry) -> store::BoxFuture<Result<Entry, ArchiveError>> {
        self.core.store.append(new)
    }

    /// When `documento` (bare) was last purged, if it was: refuses (an error) when purges are
    /// recorded but their key's file is missing.
    pub(crate) async fn purged_at(
        &self,
        documento: &str,
    ) -> Result<Option<DateTime<Utc>>, ArchiveError> {
        match self.core.purge_key(false)? {
            Some(key) => self.core.store.purged_at(&key.tag(documento)).await,
            None if self.core.store.has_purges().await? => Err(ArchiveError::plain(
                "conferir os expurgos: o arquivo da chave dos expurgos não foi encontrado",
            )),
            None => Ok(None),
        }
    }

    /// The bought answer's warning when it names an owner whose data was purged at the owner's
    /// request (a complete answer, a receipt): it was paid for, so it is returned and kept,
    /// and the caller is told. `None` when no purge is recorded.
    pub(crate) async fn purge_warning(
        &self,
        consulta: EndpointConsulta,
        body: &[u8],
    ) -> Result<Option<String>, ArchiveError> {
        if consulta == EndpointConsulta::Proprietario {
            return Ok(None);
        }
        let Some(key) = self.core.purge_key(false)? else {
            return Ok(None);
        };
        if !self.core.store.has_purges().await? {
            return Ok(None);
        }
        let documentos = documents::extract(body, consulta == EndpointConsulta::Recibo);
        for d in documentos {
            if let Some(at) = self.core.store.purged_at(&key.tag(&d)).await? {
                return Ok(Some(format!(
                    "a resposta nomeia um titular cujos dados foram expurgados do acervo a pedido dele \
                     (expurgo de {}): ela foi comprada e arquivada; trate-a conforme o pedido do titular",
                    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )));
            }
        }
        Ok(None)
    }

    /// Checks an entry about to be served (see "The chain").
    pub(crate) fn check_entry(entry: &Entry, body: &[u8]) -> Result<(), ArchiveError> {
        chain::check_entry(entry, body)
    }
}
