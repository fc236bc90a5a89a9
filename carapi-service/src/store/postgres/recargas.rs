//! Top-ups (reuse, listing, the exactly-once confirmation) and the simulated PSP's book.

use async_trait::async_trait;
use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::PgStore;
use super::rows::{RECARGA_COLUMNS, corrupt, recarga_of};
use crate::money::Centavos;
use crate::money::recarga::{self, ConfirmationPlan};
use crate::store::historico::without_nul;
use crate::store::{Confirmation, ContaId, Recarga, RecargasStore, StoreError};

/// The account's pending top-ups of amount `$2` created at or after `$3`, in insertion order:
/// the candidates of the reuse decision ([`recarga::reusable`]).
fn candidates_sql() -> String {
    format!(
        "SELECT {RECARGA_COLUMNS} FROM recargas WHERE conta_id = $1 AND valor_centavos = $2
         AND status = 'Pendente' AND criada_em >= $3 ORDER BY seq"
    )
}

async fn candidates<'e, E: sqlx::PgExecutor<'e>>(
    e: E,
    conta: ContaId,
    valor: Centavos,
    since: DateTime<Utc>,
) -> Result<Vec<Recarga>, StoreError> {
    let rows = sqlx::query(&candidates_sql())
        .bind(conta.0)
        .bind(valor.get())
        .bind(since)
        .fetch_all(e)
        .await?;
    rows.iter().map(recarga_of).collect()
}

#[async_trait]
impl RecargasStore for PgStore {
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        since: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        let c = candidates(&self.pool, conta, valor, since).await?;
        Ok(recarga::reusable(&c, valor, since, None).cloned())
    }

    /// Locks the account row first, so two concurrent requests for the same amount cannot both
    /// miss the reusable top-up and insert two.
    async fn insert_recarga(
        &self,
        fresh: Recarga,
        since: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT id FROM contas WHERE id = $1 FOR UPDATE")
            .bind(fresh.conta.0)
            .execute(&mut *tx)
            .await?;
        let c = candidates(&mut *tx, fresh.conta, fresh.valor, since).await?;
        if let Some(r) = recarga::reuse(&c, &fresh, since) {
            tx.commit().await?;
            return Ok((r.clone(), true));
        }
        sqlx::query(&format!(
            "INSERT INTO recargas ({RECARGA_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .bind(fresh.id)
        .bind(fresh.conta.0)
        .bind(&fresh.payment_id)
        .bind(fresh.valor.get())
        .bind(i64::from(fresh.percentual_bonus))
        .bind(fresh.bonus.get())
        .bind(fresh.status.as_str())
        .bind(&fresh.qr_code)
        .bind(fresh.created_at)
        .bind(fresh.confirmed_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((fresh, false))
    }

    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE recargas SET qr_code = $1 WHERE id = $2 AND qr_code = ''")
            .bind(qr_code)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM recargas WHERE id = $1 AND qr_code = ''")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE payment_id = $1"
        ))
        .bind(without_nul(payment_id))
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(recarga_of).transpose()
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE id = $1 AND conta_id = $2 AND qr_code <> ''"
        ))
        .bind(id)
        .bind(conta.0)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(recarga_of).transpose()
    }

    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
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
        let filter = "FROM recargas WHERE conta_id = $1 AND qr_code <> '' AND ($2::text IS NULL OR status = $2)";
        let status = status.map(|s| s.as_str());
        let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) {filter}"))
            .bind(conta.0)
            .bind(status)
            .fetch_one(&self.pool)
            .await?;
        let rows = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} {filter} ORDER BY criada_em DESC, seq DESC LIMIT $3 OFFSET $4"
        ))
        .bind(conta.0)
        .bind(status)
        .bind(i64::from(size))
        .bind(i64::from(page.max(1) - 1) * i64::from(size))
        .fetch_all(&self.pool)
        .await?;
        let itens = rows.iter().map(recarga_of).collect::<Result<Vec<_>, _>>()?;
        Ok((itens, total.unsigned_abs()))
    }

    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        let rows = sqlx::query(&format!(
        "SELECT {RECARGA_COLUMNS} FROM recargas WHERE status = 'Pendente' AND qr_code <> '' ORDER BY criada_em, seq LIMIT $1"
    ))
    .bind(i64::from(limite))
    .fetch_all(&self.pool)
    .await?;
        rows.iter().map(recarga_of).collect()
    }

    /// The top-up row is locked (`SELECT ... FOR UPDATE`) before it is planned on: a
    /// concurrent confirmation waits for it, then reads `Confirmado` and changes nothing. The
    /// credit commits or rolls back with the transition; when the reply of the `COMMIT` is
    /// lost, the outcome is looked up on another connection (module `outcome` of this store).
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(&format!(
            "SELECT {RECARGA_COLUMNS} FROM recargas WHERE payment_id = $1 FOR UPDATE"
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
            "UPDATE recargas SET status = $1, confirmada_em = $2 WHERE id = $3 AND status = 'Pendente'",
        )
        .bind(r.status.as_str())
        .bind(r.confirmed_at)
        .bind(r.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if moved != 1 {
            return Err(corrupt("recarga mudou durante a transação"));
        }
        sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos + $1, legado = $2 WHERE id = $3",
        )
        .bind(credit.get())
        .bind(legado_depois)
        .bind(r.conta.0)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
             VALUES ($1, 'credito', $2, 'recarga', $3, $4)",
        )
        .bind(r.conta.0)
        .bind(credit.get())
        .bind(r.id.to_string())
        .bind(at)
        .execute(&mut *tx)
        .await?;
        match tx.commit().await {
            Ok(()) => Ok(plan.confirmation()),
            Err(e) => super::outcome::confirmation(&self.pool, e, r).await,
        }
    }
}
