//! Server settings in the `configuracao` table (migration 0010).

use async_trait::async_trait;

use super::PgStore;
use crate::store::{SettingsStore, StoreError};

#[async_trait]
impl SettingsStore for PgStore {
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError> {
        // Insert-if-absent, then read what is stored: concurrent first uses (several
        // processes) all read the one row that won.
        sqlx::query("INSERT INTO configuracao (chave, valor) VALUES ($1, $2) ON CONFLICT (chave) DO NOTHING")
            .bind(chave)
            .bind(valor)
            .execute(&self.pool)
            .await?;
        Ok(
            sqlx::query_scalar("SELECT valor FROM configuracao WHERE chave = $1")
                .bind(chave)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT valor FROM configuracao WHERE chave = $1")
                .bind(chave)
                .fetch_optional(&self.pool)
                .await?,
        )
    }
}
