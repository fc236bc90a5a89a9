//! In-memory caches for the reads every lookup makes, in front of any [`Store`]:
//!
//! - API key hash -> account id, kept at most [`VALIDADE_CHAVE`]: a key rotated or revoked
//!   (`carapi-server account rotate | revoke`, another process) is refused by every server
//!   process within that time, on either store. Only hits are kept: a key unknown here (an
//!   account created by another process, e.g. `carapi-server account create`) is looked up in
//!   the store again.
//!   The account itself (balance, limits, price table) is not cached: the handlers that need
//!   it read it fresh.
//! - CAR code -> record. Records only change through `import` (or the bundled load at start).
//!   Misses are not cached, so a record imported by another process is found at once; a record
//!   that `import` *replaces* while the server runs is served as it was for at most
//!   [`VALIDADE_IMOVEL`]. The charge never reads this cache: `cache` in the answer comes from the
//!   store, inside the charge's transaction.

use std::sync::Arc;
use std::time::Duration;

use carapi_sdk::CodigoCar;
use moka::sync::Cache;

use crate::dados::Imovel;
use crate::store::{Conta, ContaId, Store, StoreError};

/// How long a key -> account entry is trusted before the store is asked again: the longest
/// a revoked or rotated key still opens its account on a running server.
pub const VALIDADE_CHAVE: Duration = Duration::from_secs(5);

/// How long a cached CAR record is served before it is read from the store again.
pub const VALIDADE_IMOVEL: Duration = Duration::from_secs(60);

/// Most keys remembered (a 64-byte hash and an id each).
const MAX_CHAVES: u64 = 100_000;
/// Most CAR records remembered.
const MAX_IMOVEIS: u64 = 10_000;

/// The caches of one server (shared by its handlers).
#[derive(Clone)]
pub struct Caches {
    chaves: Cache<String, ContaId>,
    imoveis: Cache<String, Arc<Imovel>>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("chaves", &self.chaves.entry_count())
            .field("imoveis", &self.imoveis.entry_count())
            .finish()
    }
}

impl Default for Caches {
    fn default() -> Self {
        Self::new()
    }
}

/// Who a key belongs to, as [`Caches::conta_da_chave`] found it.
#[derive(Debug)]
pub enum Titular {
    /// From the cache: only the id is known.
    Id(ContaId),
    /// From the store: the account as it is now.
    Conta(Conta),
}

impl Titular {
    /// The account id.
    pub fn id(&self) -> ContaId {
        match self {
            Titular::Id(id) => *id,
            Titular::Conta(c) => c.id,
        }
    }
}

impl Caches {
    /// Empty caches.
    pub fn new() -> Self {
        Caches {
            chaves: Cache::builder()
                .max_capacity(MAX_CHAVES)
                .time_to_live(VALIDADE_CHAVE)
                .build(),
            imoveis: Cache::builder()
                .max_capacity(MAX_IMOVEIS)
                .time_to_live(VALIDADE_IMOVEL)
                .build(),
        }
    }

    /// The owner of the key whose hex SHA-256 is `chave_hash`; `None` when no account has it.
    /// `confere` is the constant-time check of the key against the stored hash, applied to a
    /// store answer before it is cached.
    ///
    /// # Errors
    /// The store's, on a cache miss.
    pub async fn conta_da_chave(
        &self,
        store: &dyn Store,
        chave_hash: &str,
        confere: impl FnOnce(&str) -> bool,
    ) -> Result<Option<Titular>, StoreError> {
        if let Some(id) = self.chaves.get(chave_hash) {
            return Ok(Some(Titular::Id(id)));
        }
        match store.conta_por_chave(chave_hash).await? {
            Some(c) if confere(&c.chave_hash) => {
                self.chaves.insert(chave_hash.to_owned(), c.id);
                Ok(Some(Titular::Conta(c)))
            }
            _ => Ok(None),
        }
    }

    /// The record of `codigo` (see the module docs for how fresh it is).
    ///
    /// # Errors
    /// The store's, on a cache miss.
    pub async fn imovel(
        &self,
        store: &dyn Store,
        codigo: &CodigoCar,
    ) -> Result<Option<Arc<Imovel>>, StoreError> {
        if let Some(i) = self.imoveis.get(codigo.as_str()) {
            return Ok(Some(i));
        }
        let Some(imovel) = store.imovel(codigo).await? else {
            return Ok(None);
        };
        let imovel = Arc::new(imovel);
        self.imoveis
            .insert(codigo.as_str().to_owned(), imovel.clone());
        Ok(Some(imovel))
    }
}
