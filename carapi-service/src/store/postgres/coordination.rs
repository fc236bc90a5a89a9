//! What the server processes on one database share: the per-key request rate
//! ([`super::PostgresRateLimiter`]) and the job leases.

use std::num::NonZeroU32;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{PgStore, PostgresRateLimiter};
use crate::rate_limit::KeyRateLimit;
use crate::store::{CoordinationStore, PoolUse, StoreError};

#[async_trait]
impl CoordinationStore for PgStore {
    /// Kept in the database, so the limit holds across every process on it.
    fn limiter(&self, per_second: NonZeroU32) -> Arc<dyn KeyRateLimit> {
        Arc::new(PostgresRateLimiter::new(self.pool.clone(), per_second))
    }

    fn pools(&self) -> Vec<PoolUse> {
        vec![
            PoolUse::of("principal", &self.pool),
            PoolUse::of("historico", &self.historico),
        ]
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn reserve_task(
        &self,
        name: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "INSERT INTO tarefas AS t (nome, dono, ate) VALUES ($1, $2, $3)
             ON CONFLICT (nome) DO UPDATE SET dono = excluded.dono, ate = excluded.ate
             WHERE t.ate <= $4 OR t.dono = excluded.dono",
        )
        .bind(name)
        .bind(owner)
        .bind(until)
        .bind(now)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }
}
