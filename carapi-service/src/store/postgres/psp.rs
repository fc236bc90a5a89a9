//! The simulated PSP's book of PIX charges.

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};

use super::PgStore;

use crate::money::Centavos;
use crate::store::historico::without_nul;
use crate::store::{PspCharge, PspStore, StoreError};

#[async_trait]
impl PspStore for PgStore {
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO psp_cobrancas (payment_id, valor_centavos, documento, email, criada_em)
         VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(payment_id)
        .bind(valor.get())
        .bind(documento.as_str())
        .bind(email)
        .bind(at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Idempotent: the first payment instant is kept.
    async fn psp_pay(&self, payment_id: &str, at: DateTime<Utc>) -> Result<bool, StoreError> {
        let exists: Option<bool> = sqlx::query_scalar(
        "UPDATE psp_cobrancas SET paga_em = COALESCE(paga_em, $1) WHERE payment_id = $2 RETURNING TRUE",
    )
    .bind(at)
    .bind(without_nul(payment_id))
    .fetch_optional(&self.pool)
    .await?;
        Ok(exists.is_some())
    }

    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError> {
        let v: Option<(i64, Option<DateTime<Utc>>)> = sqlx::query_as(
            "SELECT valor_centavos, paga_em FROM psp_cobrancas WHERE payment_id = $1",
        )
        .bind(without_nul(payment_id))
        .fetch_optional(&self.pool)
        .await?;
        Ok(v.map(|(valor, paid_at)| PspCharge {
            valor: Centavos::new(valor),
            paid_at,
        }))
    }
}
