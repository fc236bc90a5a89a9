//! The per-key request rate (contract, "Limits": 10 requests per second per key on every
//! endpoint) behind one interface, wherever its state lives:
//!
//! - in this process ([`crate::limits::Limitador`], a keyed GCRA): the SQLite store's
//!   choice, a server that is the only process on its database;
//! - in the database, shared by every server process on it: the PostgreSQL store's choice
//!   (`store::postgres` keeps one row per key, updated atomically by one statement per
//!   request; see [`crate::store::CoordenacaoStore::limitador`]).
//!
//! Both apply the same rule (GCRA, burst equal to the rate): `n` requests per second per key,
//! up to `n` at once after an idle second.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use crate::limits::Limitador;
use crate::money::ContaId;

/// A per-key request-rate limiter.
#[async_trait]
pub trait LimitePorChave: Send + Sync + fmt::Debug {
    /// Counts one request of `conta`: `Ok` when it may proceed; otherwise how long until it
    /// would (the `Retry-After`), and the request is not counted.
    async fn verificar(&self, conta: ContaId) -> Result<(), Duration>;

    /// Forgets keys idle long enough to be back at full burst (local state; the default does
    /// nothing).
    fn limpar(&self) {}
}

#[async_trait]
impl LimitePorChave for Limitador {
    async fn verificar(&self, conta: ContaId) -> Result<(), Duration> {
        Limitador::verificar(self, conta)
    }

    fn limpar(&self) {
        Limitador::limpar(self);
    }
}
