//! Accounts, their limits and the ledger check.

use async_trait::async_trait;

use super::PgStore;
use super::rows::conta_state;
use crate::money::Centavos;
use crate::store::{Conta, ContaId, ContasStore, Ledger, NovaContaRecord, Patch, StoreError};

#[async_trait]
impl ContasStore for PgStore {
    async fn create_conta(&self, fresh: NovaContaRecord) -> Result<ContaId, StoreError> {
        let mut tx = self.pool.begin().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO contas (chave_hash, saldo_centavos, legado, documento, email, criada_em)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(&fresh.chave_hash)
        .bind(fresh.saldo.get())
        .bind(fresh.legado)
        .bind(fresh.documento.as_ref().map(|d| d.as_str().to_owned()))
        .bind(&fresh.email)
        .bind(fresh.at)
        .fetch_one(&mut *tx)
        .await?;
        if fresh.saldo.get() > 0 {
            sqlx::query(
                "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, criado_em)
             VALUES ($1, 'credito', $2, 'saldo_inicial', $3)",
            )
            .bind(id)
            .bind(fresh.saldo.get())
            .bind(fresh.at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(ContaId(id))
    }

    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE chave_hash = $1")
            .bind(chave_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(conta_state).transpose()
    }

    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE id = $1")
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(conta_state).transpose()
    }

    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM contas ORDER BY id")
            .fetch_all(&self.pool)
            .await?;
        Ok(ids.into_iter().map(ContaId).collect())
    }

    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        let mut tx = self.pool.begin().await?;
        if let Some(d) = diario {
            sqlx::query("UPDATE contas SET limite_diario = $1 WHERE id = $2")
                .bind(d.map(i64::from))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(m) = mensal {
            sqlx::query("UPDATE contas SET limite_mensal_centavos = $1 WHERE id = $2")
                .bind(m.map(|c| c.get()))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        let row = sqlx::query("SELECT * FROM contas WHERE id = $1")
            .bind(id.0)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.as_ref().map(conta_state).transpose()
    }

    /// The ledger sums of `conta` from one snapshot (a `REPEATABLE READ` read-only transaction,
    /// so a charge committing meanwhile cannot make the sums disagree).
    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .execute(&mut *tx)
            .await?;
        let Some(saldo): Option<i64> =
            sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = $1")
                .bind(conta.0)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(None);
        };
        let sums: (i64, i64, i64, i64, i64, i64) = sqlx::query_as(
        "SELECT
           (SELECT COALESCE(SUM(valor_centavos), 0)::BIGINT FROM lancamentos WHERE conta_id = $1 AND tipo = 'credito'),
           (SELECT COALESCE(SUM(valor_centavos), 0)::BIGINT FROM lancamentos WHERE conta_id = $1 AND tipo = 'debito'),
           (SELECT COALESCE(SUM(valor_centavos), 0)::BIGINT FROM lancamentos WHERE conta_id = $1 AND origem = 'saldo_inicial'),
           (SELECT COALESCE(SUM(valor_centavos), 0)::BIGINT FROM consultas WHERE conta_id = $1 AND cobrado),
           (SELECT COALESCE(SUM(valor_centavos + bonus_centavos), 0)::BIGINT FROM recargas WHERE conta_id = $1 AND status = 'Confirmado'),
           (SELECT COALESCE(SUM(valor_centavos), 0)::BIGINT FROM lancamentos WHERE conta_id = $1 AND origem = 'estorno')",
    )
    .bind(conta.0)
    .fetch_one(&mut *tx)
    .await?;
        tx.commit().await?;
        let (credits, debits, initial, historico, recargas, estornos) = sums;
        Ok(Some(Ledger {
            conta_id: conta,
            saldo: Centavos::new(saldo),
            credits: Centavos::new(credits),
            debits: Centavos::new(debits),
            cobrado_historico: Centavos::new(historico),
            creditado_recargas: Centavos::new(recargas),
            saldo_inicial: Centavos::new(initial),
            estornos: Centavos::new(estornos),
        }))
    }
}
