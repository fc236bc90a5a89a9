//! Top-ups (reuse, listing, the exactly-once confirmation) and the simulated PSP's book.

use async_trait::async_trait;
use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::SqliteStore;
use super::rows::{RECARGA_COLUMNS, corrupt, ms, recarga_of};
use crate::money::Centavos;
use crate::money::recarga::{self, ConfirmationPlan};
use crate::store::historico::without_nul;
use crate::store::{Confirmation, ContaId, Recarga, RecargasStore, StoreError};

/// The account's pending top-ups of amount `valor` created at or after `desde`, in insertion
/// order: the candidates of the reuse decision ([`recarga::reusable`]).
async fn candidates<'e, E: sqlx::SqliteExecutor<'e>>(
    e: E,
    conta: ContaId,
    valor: Centavos,
    since: DateTime<Utc>,
) -> Result<Vec<Recarga>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {RECARGA_COLUMNS} FROM recargas WHERE conta_id = ? AND valor_centavos = ?
         AND status = 'Pendente' AND criada_em >= ? ORDER BY rowid"
    ))
    .bind(conta.0)
    .bind(valor.get())
    .bind(ms(since))
    .fetch_all(e)
    .await?;
    rows.iter().map(recarga_of).collect()
}

#[async_trait]
impl RecargasStore for SqliteStore {
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        since: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        let c = candidates(&self.reading, conta, valor, since).await?;
        Ok(recarga::reusable(&c, valor, since, None).cloned())
    }

    async fn insert_recarga(
        &self,
        fresh: Recarga,
        since: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        let mut tx = self.begin_immediate().await?;
        let c = candidates(&mut *tx, fresh.conta, fresh.valor, since).await?;
        if let Some(r) = recarga::reuse(&c, &fresh, since) {
            tx.commit().await?;
            return Ok((r.clone(), true));
        }
        sqlx::query(&format!(
            "INSERT INTO recargas ({RECARGA_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(fresh.id.to_string())
        .bind(fresh.conta.0)
        .bind(&fresh.payment_id)
        .bind(fresh.valor.get())
        .bind(i64::from(fresh.percentual_bonus))
        .bind(fresh.bonus.get())
        .bind(fresh.status.as_str())
        .bind(&fresh.qr_code)
        .bind(ms(fresh.created_at))
        .bind(fresh.confirmed_at.map(ms))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((fresh, false))
    }

    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        let mut tx = self.begin_immediate().await?;
        sqlx::query("UPDATE recargas SET qr_code = ? WHERE id = ? AND qr_code = ''")
            .bind(qr_code)
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        let mut tx = self.begin_immediate().await?;
        sqlx::query("DELETE FROM recargas WHERE id = ? AND qr_code = ''")
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE payment_id = ?"
        ))
        .bind(without_nul(payment_id))
        .fetch_optional(&self.reading)
        .await?;
        row.as_ref().map(recarga_of).transpose()
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE id = ? AND conta_id = ? AND qr_code <> ''"
        ))
        .bind(id.to_string())
        .bind(conta.0)
        .fetch_optional(&self.reading)
        .await?;
        row.as_ref().map(recarga_of).transpose()
    }

    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE id = ?"
        ))
        .bind(id.to_string())
        .fetch_optional(&self.reading)
        .await?;
        row.as_ref().map(recarga_of).transpose()
    }

    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        let filter = if status.is_some() {
            " AND status = ?"
        } else {
            ""
        };
        let total_sql =
            format!("SELECT COUNT(*) FROM recargas WHERE conta_id = ? AND qr_code <> ''{filter}");
        let mut q = sqlx::query_scalar(&total_sql).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let total: i64 = q.fetch_one(&self.reading).await?;
        let sql = format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE conta_id = ? AND qr_code <> ''{filter} ORDER BY criada_em DESC, rowid DESC LIMIT ? OFFSET ?"
        );
        let mut q = sqlx::query(&sql).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let rows = q
            .bind(i64::from(size))
            .bind(i64::from(page.max(1) - 1) * i64::from(size))
            .fetch_all(&self.reading)
            .await?;
        let itens = rows.iter().map(recarga_of).collect::<Result<Vec<_>, _>>()?;
        Ok((itens, total as u64))
    }

    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        let rows = sqlx::query(&format!(
        "SELECT {RECARGA_COLUMNS} FROM recargas WHERE status = 'Pendente' AND qr_code <> '' ORDER BY criada_em LIMIT ?"
    ))
    .bind(i64::from(limite))
    .fetch_all(&self.reading)
    .await?;
        rows.iter().map(recarga_of).collect()
    }

    /// Under `BEGIN IMMEDIATE` (no other writer in between): reads the top-up, plans with
    /// `recarga::plan_confirmation` and applies the plan.
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE payment_id = ?"
        ))
        .bind(without_nul(payment_id))
        .fetch_optional(&mut *tx)
        .await?;
        let atual = row.as_ref().map(recarga_of).transpose()?;
        let plan = recarga::plan_confirmation(atual.as_ref(), at)?;
        let ConfirmationPlan::Credit {
            credit,
            legado_depois,
            recarga: r,
        } = &plan
        else {
            tx.commit().await?;
            return Ok(plan.confirmation());
        };
        let moved = sqlx::query(
            "UPDATE recargas SET status = ?, confirmada_em = ? WHERE id = ? AND status = 'Pendente'",
        )
        .bind(r.status.as_str())
        .bind(r.confirmed_at.map(ms))
        .bind(r.id.to_string())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if moved != 1 {
            return Err(corrupt("recarga mudou durante a transação"));
        }
        sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos + ?, legado = ? WHERE id = ?",
        )
        .bind(credit.get())
        .bind(legado_depois)
        .bind(r.conta.0)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'credito', ?, 'recarga', ?, ?)",
        )
        .bind(r.conta.0)
        .bind(credit.get())
        .bind(r.id.to_string())
        .bind(ms(at))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(plan.confirmation())
    }
}
