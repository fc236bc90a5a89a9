//! What the server processes on one database share: the per-key request rate
//! ([`super::LimitadorPostgres`]) and the job leases.

use std::num::NonZeroU32;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{LimitadorPostgres, PgStore};
use crate::limite_chave::LimitePorChave;
use crate::store::{CoordenacaoStore, StoreError};

#[async_trait]
impl CoordenacaoStore for PgStore {
    /// Kept in the database, so the limit holds across every process on it.
    fn limitador(&self, por_segundo: NonZeroU32) -> Arc<dyn LimitePorChave> {
        Arc::new(LimitadorPostgres::new(self.pool.clone(), por_segundo))
    }

    async fn reservar_tarefa(
        &self,
        nome: &str,
        dono: &str,
        agora: DateTime<Utc>,
        ate: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let n = sqlx::query(
            "INSERT INTO tarefas AS t (nome, dono, ate) VALUES ($1, $2, $3)
             ON CONFLICT (nome) DO UPDATE SET dono = excluded.dono, ate = excluded.ate
             WHERE t.ate <= $4 OR t.dono = excluded.dono",
        )
        .bind(nome)
        .bind(dono)
        .bind(ate)
        .bind(agora)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(n == 1)
    }
}
