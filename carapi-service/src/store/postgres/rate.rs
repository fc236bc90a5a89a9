//! The per-key request rate kept in PostgreSQL, so that it holds across every server process
//! on the database: one row per key in the `UNLOGGED` table `rate_limit` (migration 0003),
//! holding the key's theoretical arrival time (GCRA) in microseconds of the database's clock
//! (one clock for every process).
//!
//! One statement per request: an `INSERT ... ON CONFLICT DO UPDATE ... WHERE` that advances the
//! arrival time only when the request is allowed; the row lock serialises the requests of one
//! key across processes, other keys are not blocked. When refused, the same statement returns
//! how long until a request would be allowed. A database failure lets the request through (and
//! is logged): the request then fails or succeeds on its own merits.

use std::num::NonZeroU32;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgPool;

use crate::rate_limit::KeyRateLimit;
use crate::store::ContaId;

/// GCRA over `rate_limit`: `per_second` requests per second per key, bursts up to
/// `per_second`.
#[derive(Debug, Clone)]
pub struct PostgresRateLimiter {
    pool: PgPool,
    /// Emission interval: one request every `interval_us` microseconds.
    interval_us: i64,
    /// Burst tolerance: `(per_second - 1) * interval_us`.
    tolerance_us: i64,
}

/// $1 key, $2 emission interval, $3 burst tolerance (microseconds). Returns whether the request
/// was allowed and, when not, the microseconds until one would be.
const SQL: &str = "WITH agora AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT AS us),
  aceito AS (
    INSERT INTO limite_taxa AS l (conta_id, tat_us) SELECT $1, us + $2 FROM agora
    ON CONFLICT (conta_id) DO UPDATE SET tat_us = GREATEST(l.tat_us, excluded.tat_us - $2) + $2
      WHERE l.tat_us - (excluded.tat_us - $2) <= $3
    RETURNING 1)
SELECT EXISTS (SELECT 1 FROM aceito),
       COALESCE((SELECT l.tat_us FROM limite_taxa l WHERE l.conta_id = $1), 0) - (SELECT us FROM agora) - $3
";

impl PostgresRateLimiter {
    /// `per_second` requests per second per key over `pool` (already migrated).
    pub(crate) fn new(pool: PgPool, per_second: NonZeroU32) -> Self {
        let interval_us = 1_000_000 / i64::from(per_second.get());
        PostgresRateLimiter {
            pool,
            interval_us,
            tolerance_us: interval_us * (i64::from(per_second.get()) - 1),
        }
    }
}

#[async_trait]
impl KeyRateLimit for PostgresRateLimiter {
    async fn check(&self, conta: ContaId) -> Result<(), Duration> {
        let r: Result<(bool, i64), _> = sqlx::query_as(SQL)
            .bind(conta.0)
            .bind(self.interval_us)
            .bind(self.tolerance_us)
            .fetch_one(&self.pool)
            .await;
        match r {
            Ok((true, _)) => Ok(()),
            Ok((false, wait_us)) => Err(Duration::from_micros(wait_us.max(1).unsigned_abs())),
            Err(e) => {
                tracing::warn!(erro = %e, conta = %conta, "limite por chave indisponível; requisição liberada");
                Ok(())
            }
        }
    }
}
