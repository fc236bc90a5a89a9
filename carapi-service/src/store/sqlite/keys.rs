//! Replacing an account's key hash (`account rotate`, `account revoke`).

use super::SqliteStore;
use crate::store::{ContaId, StoreError};

impl SqliteStore {
    /// Stores `chave_hash` as the key of account `id` in place of the one it had (which is
    /// refused by the store from then on); false when no account has that id.
    ///
    /// # Errors
    /// [`StoreError`] when the write fails.
    pub async fn rotate_key(&self, id: ContaId, chave_hash: &str) -> Result<bool, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let n = sqlx::query("UPDATE contas SET chave_hash = ? WHERE id = ?")
            .bind(chave_hash)
            .bind(id.0)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(n == 1)
    }
}
