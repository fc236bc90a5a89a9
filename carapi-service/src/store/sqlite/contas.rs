//! Accounts, their limits and the ledger check.

use super::SqliteStore;
use super::rows::{conta_state, ms};
use crate::money::Centavos;
use crate::store::{Conta, ContaId, ContasStore, Ledger, NovaContaRecord, Patch, StoreError};
use async_trait::async_trait;

#[async_trait]
impl ContasStore for SqliteStore {
    async fn create_conta(&self, fresh: NovaContaRecord) -> Result<ContaId, StoreError> {
        let mut tx = self.begin_immediate().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO contas (chave_hash, saldo_centavos, legado, documento, email, criada_em)
         VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&fresh.chave_hash)
        .bind(fresh.saldo.get())
        .bind(i64::from(fresh.legado))
        .bind(fresh.documento.as_ref().map(|d| d.as_str().to_owned()))
        .bind(&fresh.email)
        .bind(ms(fresh.at))
        .fetch_one(&mut *tx)
        .await?;
        if fresh.saldo.get() > 0 {
            sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, criado_em) VALUES (?, 'credito', ?, 'saldo_inicial', ?)",
        )
        .bind(id)
        .bind(fresh.saldo.get())
        .bind(ms(fresh.at))
        .execute(&mut *tx)
        .await?;
        }
        tx.commit().await?;
        Ok(ContaId(id))
    }

    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE chave_hash = ?")
            .bind(chave_hash)
            .fetch_optional(&self.reading)
            .await?;
        row.as_ref().map(conta_state).transpose()
    }

    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&self.reading)
            .await?;
        row.as_ref().map(conta_state).transpose()
    }

    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM contas ORDER BY id")
            .fetch_all(&self.reading)
            .await?;
        Ok(ids.into_iter().map(ContaId).collect())
    }

    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        let mut tx = self.begin_immediate().await?;
        if let Some(d) = diario {
            sqlx::query("UPDATE contas SET limite_diario = ? WHERE id = ?")
                .bind(d.map(i64::from))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(m) = mensal {
            sqlx::query("UPDATE contas SET limite_mensal_centavos = ? WHERE id = ?")
                .bind(m.map(|c| c.get()))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.as_ref().map(conta_state).transpose()
    }

    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError> {
        // One read transaction: a consistent snapshot of the balance and the sums.
        let mut tx = self.reading.begin().await?;
        let Some(saldo): Option<i64> =
            sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = ?")
                .bind(conta.0)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(None);
        };
        let sum = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql).bind(conta.0);
        let credits = sum("SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND tipo = 'credito'")
        .fetch_one(&mut *tx)
        .await?;
        let debits = sum("SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND tipo = 'debito'")
        .fetch_one(&mut *tx)
        .await?;
        let initial = sum(
        "SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND origem = 'saldo_inicial'",
    )
    .fetch_one(&mut *tx)
    .await?;
        let estornos = sum(
            "SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND origem = 'estorno'",
        )
        .fetch_one(&mut *tx)
        .await?;
        let historico = sum(
        "SELECT COALESCE(SUM(valor_centavos), 0) FROM consultas WHERE conta_id = ? AND cobrado = 1",
    )
    .fetch_one(&mut *tx)
    .await?;
        let recargas = sum(
        "SELECT COALESCE(SUM(valor_centavos + bonus_centavos), 0) FROM recargas WHERE conta_id = ? AND status = 'Confirmado'",
    )
    .fetch_one(&mut *tx)
    .await?;
        tx.commit().await?;
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
