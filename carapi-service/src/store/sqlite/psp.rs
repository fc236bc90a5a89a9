//! The simulated PSP's book of PIX charges.

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};

use super::SqliteStore;
use super::rows::{instant, ms};
use crate::money::Centavos;
use crate::store::historico::without_nul;
use crate::store::{PspCharge, PspStore, StoreError};

#[async_trait]
impl PspStore for SqliteStore {
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_immediate().await?;
        sqlx::query("INSERT INTO psp_cobrancas (payment_id, valor_centavos, documento, email, criada_em) VALUES (?, ?, ?, ?, ?)")
        .bind(payment_id)
        .bind(valor.get())
        .bind(documento.as_str())
        .bind(email)
        .bind(ms(at))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn psp_pay(&self, payment_id: &str, at: DateTime<Utc>) -> Result<bool, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let exists: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM psp_cobrancas WHERE payment_id = ?")
                .bind(without_nul(payment_id))
                .fetch_optional(&mut *tx)
                .await?;
        if exists.is_some() {
            sqlx::query(
                "UPDATE psp_cobrancas SET paga_em = ? WHERE payment_id = ? AND paga_em IS NULL",
            )
            .bind(ms(at))
            .bind(payment_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(exists.is_some())
    }

    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError> {
        let v: Option<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT valor_centavos, paga_em FROM psp_cobrancas WHERE payment_id = ?",
        )
        .bind(without_nul(payment_id))
        .fetch_optional(&self.reading)
        .await?;
        Ok(v.map(|(valor, paid_at)| PspCharge {
            valor: Centavos::new(valor),
            paid_at: paid_at.map(instant),
        }))
    }
}
