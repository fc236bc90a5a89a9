//! Request rates, the one home of the service's rate limits:
//!
//! - per key (contract, "Limits": 10 requests per second per key on every endpoint), behind
//!   [`KeyRateLimit`] wherever its state lives, checked by authentication for every `/v1`
//!   request but a sandbox lookup;
//! - per client address for requests that fail authentication ([`AddressLimiter`]).
//!
//! The per-key state lives
//!
//! - in this process ([`RateLimiter`], a keyed GCRA): the SQLite store's choice, a server that
//!   is the only process on its database;
//! - in the database, shared by every server process on it: the PostgreSQL store's choice
//!   (`store::postgres` keeps one row per key, updated atomically by one statement per
//!   request; see [`crate::store::CoordinationStore::limiter`]).
//!
//! Both apply the same rule (GCRA, burst equal to the rate): `n` requests per second per key,
//! up to `n` at once after an idle second.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use crate::money::ContaId;

mod address;
mod gcra;

pub use address::{AddressLimiter, IP_BLOCK, address_key};
pub use gcra::RateLimiter;

/// A per-key request-rate limiter.
#[async_trait]
pub trait KeyRateLimit: Send + Sync + fmt::Debug {
    /// Counts one request of `conta`: `Ok` when it may proceed; otherwise how long until it
    /// would (the `Retry-After`), and the request is not counted.
    async fn check(&self, conta: ContaId) -> Result<(), Duration>;

    /// Forgets keys idle long enough to be back at full burst (local state; the default does
    /// nothing).
    fn clear(&self) {}
}

#[async_trait]
impl KeyRateLimit for RateLimiter {
    async fn check(&self, conta: ContaId) -> Result<(), Duration> {
        RateLimiter::check(self, conta)
    }

    fn clear(&self) {
        RateLimiter::clear(self);
    }
}

/// Whole seconds of `espera`, rounded up: the `Retry-After` of a refusal.
pub(crate) fn seconds_above(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}
