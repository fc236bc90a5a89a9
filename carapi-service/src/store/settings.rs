//! Server settings kept in the database.

use async_trait::async_trait;

use super::StoreError;

/// Server settings kept in the database (`configuracao` table).
#[async_trait]
pub trait SettingsStore {
    /// The value of `chave`, storing `valor` first when there is none; atomic: concurrent
    /// first calls, in any process, all get the value that was stored.
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError>;
    /// The value of `chave`, `None` when there is none (nothing is written).
    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError>;
}
