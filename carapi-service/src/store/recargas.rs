//! PIX top-ups as stored.

use async_trait::async_trait;
use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::StoreError;
use crate::money::recarga::{Confirmation, Recarga};
use crate::money::{Centavos, ContaId};

/// PIX top-ups of the accounts.
#[async_trait]
pub trait RecargasStore {
    /// A pending top-up of `conta` for `valor` created at or after `desde` (one still being
    /// created is not returned).
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        since: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError>;
    /// Stores `nova` unless a reusable one (same account and amount, pending, created at or
    /// after `desde`; one still being created counts unless older than [`CREATION_DEADLINE_S`](crate::money::recarga::CREATION_DEADLINE_S)
    /// before `fresh.created_at`) exists, in one transaction; returns the top-up and whether it
    /// was reused. `nova` may be a row being created (empty `qr_code`).
    async fn insert_recarga(
        &self,
        fresh: Recarga,
        since: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError>;
    /// Fills in the BR Code of the top-up `id` being created.
    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError>;
    /// Deletes the top-up `id` if it is still being created (its provider call failed).
    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError>;
    /// The top-up `id` of `conta` (None when missing, another account's or being created).
    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up `id`, whatever the account, also while being created (operator tools).
    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError>;
    /// The top-up whose payment id is `payment_id` (webhook).
    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError>;
    /// A page of the account's top-ups, newest first, and the total.
    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError>;
    /// Up to `limite` pending top-ups of every account, oldest first.
    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError>;
    /// In one transaction: reads the top-up, plans with
    /// `crate::money::recarga::plan_confirmation` and applies the plan (conditional
    /// transition Pendente -> Confirmado, credit of amount plus bonus with its ledger row, move
    /// to the current price table): whatever the order and the repeats, a top-up is credited
    /// once. Safe under concurrency (including other processes).
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError>;
}
