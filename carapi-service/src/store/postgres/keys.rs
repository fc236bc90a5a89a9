//! Replacing an account's key hash (`account rotate`, `account revoke`).

use super::PgStore;
use crate::store::{ContaId, StoreError};

impl PgStore {
    /// Stores `chave_hash` as the key of account `id` in place of the one it had (which is
    /// refused by the store from then on); false when no account has that id.
    ///
    /// # Errors
    /// [`StoreError`] when the write fails.
    pub async fn rotate_key(&self, id: ContaId, chave_hash: &str) -> Result<bool, StoreError> {
        let n = sqlx::query("UPDATE contas SET chave_hash = $1 WHERE id = $2")
            .bind(chave_hash)
            .bind(id.0)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(n == 1)
    }
}
