//! What several server processes on one database share besides the data.

use std::num::NonZeroU32;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::metrics::PoolUse;
use crate::money::ContaId;
use crate::rate_limit::{KeyRateLimit, RateLimiter};

/// What several server processes on one database share besides the data: the per-key request
/// rate and the leases of the periodic jobs.
#[async_trait]
pub trait CoordinationStore {
    /// The per-key rate limiter of a server over this store: `per_second` requests per second
    /// per key. The default keeps its state in this process (right for a database used by one
    /// process); a store shared by several processes keeps it in the database.
    fn limiter(&self, per_second: NonZeroU32) -> Arc<dyn KeyRateLimit> {
        Arc::new(RateLimiter::<ContaId>::new(per_second))
    }

    /// The use of the store's connection pools now (for `GET /metrics`); none by default.
    fn pools(&self) -> Vec<PoolUse> {
        Vec::new()
    }

    /// A cheap round trip to the database (`SELECT 1` on a pooled connection), for the
    /// readiness probe (`GET /readyz`).
    ///
    /// # Errors
    /// The store's error when no connection can be had or the statement fails.
    async fn ping(&self) -> Result<(), StoreError>;

    /// Takes (or renews) the lease of the job `nome` for the process `dono` until `ate`, when it
    /// is free, expired at `now`, or already `dono`'s; returns whether `dono` holds it now.
    /// Atomic across processes: at any instant at most one holder.
    async fn reserve_task(
        &self,
        name: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
}
