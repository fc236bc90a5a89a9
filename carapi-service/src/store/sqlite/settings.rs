//! Server settings in the `configuracao` table (migration 0010).

use async_trait::async_trait;

use super::SqliteStore;
use crate::store::{SettingsStore, StoreError};

#[async_trait]
impl SettingsStore for SqliteStore {
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError> {
        let mut tx = self.begin_immediate().await?;
        sqlx::query(
            "INSERT INTO configuracao (chave, valor) VALUES (?, ?) ON CONFLICT (chave) DO NOTHING",
        )
        .bind(chave)
        .bind(valor)
        .execute(&mut *tx)
        .await?;
        let atual: String = sqlx::query_scalar("SELECT valor FROM configuracao WHERE chave = ?")
            .bind(chave)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(atual)
    }

    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT valor FROM configuracao WHERE chave = ?")
                .bind(chave)
                .fetch_optional(&self.reading)
                .await?,
        )
    }
}
