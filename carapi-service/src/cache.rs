//! In-memory caches for the reads every lookup makes, in front of any [`Store`]:
//!
//! - API key hash -> account id, kept at most [`KEY_TTL`]: a key rotated or revoked
//!   (`carapi-server account rotate | revoke`, another process) is refused by every server
//!   process within that time, on either store. Only hits are kept: a key unknown here (an
//!   account created by another process, e.g. `carapi-server account create`) is looked up in
//!   the store again.
//!   The account itself (balance, limits, price table) is not cached: the handlers that need
//!   it read it fresh.
//! - CAR code -> record. Records only change through `import` (or the bundled load at start).
//!   Misses are not cached, so a record imported by another process is found at once; a record
//!   that `import` *replaces* while the server runs is served as it was for at most
//!   [`IMOVEL_TTL`]. The charge never reads this cache: `cache` in the answer comes from the
//!   store, inside the charge's transaction.

use std::sync::Arc;
use std::time::Duration;

use carapi_sdk::CodigoCar;
use moka::sync::Cache;

use crate::dados::Imovel;
use crate::store::{Conta, ContaId, Store, StoreError};

/// How long a key -> account entry is trusted before the store is asked again: the longest
/// a revoked or rotated key still opens its account on a running server.
pub(crate) const KEY_TTL: Duration = Duration::from_secs(5);

/// How long a cached CAR record is served before it is read from the store again.
pub(crate) const IMOVEL_TTL: Duration = Duration::from_secs(60);

/// Most keys remembered (a 64-byte hash and an id each).
const MAX_KEYS: u64 = 100_000;
/// Most CAR records remembered.
const MAX_IMOVEIS: u64 = 10_000;

/// The caches of one server (shared by its handlers).
#[derive(Clone)]
pub(crate) struct Caches {
    keys: Cache<String, ContaId>,
    imoveis: Cache<String, Arc<Imovel>>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("chaves", &self.keys.entry_count())
            .field("imoveis", &self.imoveis.entry_count())
            .finish()
    }
}

impl Default for Caches {
    fn default() -> Self {
        Self::new()
    }
}

/// Who a key belongs to, as [`Caches::conta_of_key`] found it.
#[derive(Debug)]
pub(crate) enum KeyOwner {
    /// From the cache: only the id is known.
    Id(ContaId),
    /// From the store: the account as it is now.
    Conta(Conta),
}

impl KeyOwner {
    /// The account id.
    pub(crate) fn id(&self) -> ContaId {
        match self {
            KeyOwner::Id(id) => *id,
            KeyOwner::Conta(c) => c.id,
        }
    }
}

impl Caches {
    /// Empty caches.
    pub(crate) fn new() -> Self {
        Caches {
            keys: Cache::builder()
                .max_capacity(MAX_KEYS)
                .time_to_live(KEY_TTL)
                .build(),
            imoveis: Cache::builder()
                .max_capacity(MAX_IMOVEIS)
                .time_to_live(IMOVEL_TTL)
                .build(),
        }
    }

    /// The owner of the key whose hex SHA-256 is `chave_hash`; `None` when no account has it.
    /// `matches_expected` is the constant-time check of the key against the stored hash, applied to a
    /// store answer before it is cached.
    ///
    /// # Errors
    /// The store's, on a cache miss.
    pub(crate) async fn conta_of_key(
        &self,
        store: &dyn Store,
        chave_hash: &str,
        matches_expected: impl FnOnce(&str) -> bool,
    ) -> Result<Option<KeyOwner>, StoreError> {
        if let Some(id) = self.keys.get(chave_hash) {
            return Ok(Some(KeyOwner::Id(id)));
        }
        match store.conta_by_key(chave_hash).await? {
            Some(c) if matches_expected(&c.chave_hash) => {
                self.keys.insert(chave_hash.to_owned(), c.id);
                Ok(Some(KeyOwner::Conta(c)))
            }
            _ => Ok(None),
        }
    }

    /// The record of `codigo` (see the module docs for how fresh it is).
    ///
    /// # Errors
    /// The store's, on a cache miss.
    pub(crate) async fn imovel(
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

    /// Forgets the cached record of `codigo` (the store's changed): the next lookup reads it.
    pub(crate) fn forget_imovel(&self, codigo: &CodigoCar) {
        self.imoveis.invalidate(codigo.as_str());
    }
}
