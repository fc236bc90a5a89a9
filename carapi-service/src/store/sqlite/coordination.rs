//! Job leases (the per-key rate stays in the process: [`CoordinationStore::limiter`]'s
//! default).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::SqliteStore;
use super::rows::ms;
use crate::store::{CoordinationStore, PoolUse, StoreError};

#[async_trait]
impl CoordinationStore for SqliteStore {
    fn pools(&self) -> Vec<PoolUse> {
        vec![
            PoolUse::of("escrita", &self.write),
            PoolUse::of("leitura", &self.reading),
            PoolUse::of("historico", &self.historico),
        ]
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reading).await?;
        Ok(())
    }

    async fn reserve_task(
        &self,
        name: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let n = sqlx::query(
            "INSERT INTO tarefas (nome, dono, ate_ms) VALUES (?, ?, ?)
             ON CONFLICT (nome) DO UPDATE SET dono = excluded.dono, ate_ms = excluded.ate_ms
             WHERE tarefas.ate_ms <= ? OR tarefas.dono = excluded.dono",
        )
        .bind(name)
        .bind(owner)
        .bind(ms(until))
        .bind(ms(now))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(n == 1)
    }
}
