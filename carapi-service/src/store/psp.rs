//! The simulated PSP's book of PIX charges.

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::money::Centavos;

/// A charge in the simulated PSP's book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PspCharge {
    /// Amount of the charge.
    pub valor: Centavos,
    /// When it was paid; `None` while pending.
    pub paid_at: Option<DateTime<Utc>>,
}

/// The simulated PSP's book of PIX charges.
#[async_trait]
pub trait PspStore {
    /// Records a charge created at the simulated PSP.
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
    /// Marks a PSP charge paid (idempotent); false when unknown.
    async fn psp_pay(&self, payment_id: &str, at: DateTime<Utc>) -> Result<bool, StoreError>;
    /// The charge `payment_id` in the book: amount and payment instant; `None` when unknown.
    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError>;
}
