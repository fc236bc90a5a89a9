//! Top-ups (reuse, listing, the exactly-once confirmation) and the simulated PSP's book.

use async_trait::async_trait;
use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::PgStore;
use super::linhas::{COLUNAS_RECARGA, recarga_de};
use crate::money::Centavos;
use crate::store::historico::sem_nul;
use crate::store::{Confirmacao, ContaId, PRAZO_CRIACAO_S, Recarga, RecargasStore, StoreError};

/// `$4`: rows being created (empty BR Code) count from this instant on ([`PRAZO_CRIACAO_S`]).
fn sql_reaproveitavel() -> String {
    format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = $1 AND valor_centavos = $2
         AND status = 'Pendente' AND criada_em >= $3 AND (qr_code <> '' OR criada_em >= $4)
         ORDER BY criada_em DESC, seq DESC LIMIT 1"
    )
}

#[async_trait]
impl RecargasStore for PgStore {
    async fn recarga_reaproveitavel(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&sql_reaproveitavel())
            .bind(conta.0)
            .bind(valor.0)
            .bind(desde)
            // rows being created are never returned here: `$4` is past every row
            .bind(DateTime::<Utc>::MAX_UTC)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    /// Locks the account row first, so two concurrent requests for the same amount cannot both
    /// miss the reusable top-up and insert two.
    async fn inserir_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT id FROM contas WHERE id = $1 FOR UPDATE")
            .bind(nova.conta.0)
            .execute(&mut *tx)
            .await?;
        let existente = sqlx::query(&sql_reaproveitavel())
            .bind(nova.conta.0)
            .bind(nova.valor.0)
            .bind(desde)
            .bind(nova.criada_em - chrono::Duration::seconds(PRAZO_CRIACAO_S))
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existente {
            tx.commit().await?;
            return Ok((recarga_de(&row)?, true));
        }
        sqlx::query(&format!(
        "INSERT INTO recargas ({COLUNAS_RECARGA}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(nova.id)
    .bind(nova.conta.0)
    .bind(&nova.payment_id)
    .bind(nova.valor.0)
    .bind(i64::from(nova.percentual_bonus))
    .bind(nova.bonus.0)
    .bind(nova.status.as_str())
    .bind(&nova.qr_code)
    .bind(nova.criada_em)
    .bind(nova.confirmada_em)
    .execute(&mut *tx)
    .await?;
        tx.commit().await?;
        Ok((nova, false))
    }

    async fn completar_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE recargas SET qr_code = $1 WHERE id = $2 AND qr_code = ''")
            .bind(qr_code)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn descartar_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM recargas WHERE id = $1 AND qr_code = ''")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn recarga_por_payment_id(
        &self,
        payment_id: &str,
    ) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = $1"
        ))
        .bind(sem_nul(payment_id))
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = $1 AND conta_id = $2 AND qr_code <> ''"
        ))
        .bind(id)
        .bind(conta.0)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recarga_por_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        let filtro = "FROM recargas WHERE conta_id = $1 AND qr_code <> '' AND ($2::text IS NULL OR status = $2)";
        let status = status.map(|s| s.as_str());
        let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) {filtro}"))
            .bind(conta.0)
            .bind(status)
            .fetch_one(&self.pool)
            .await?;
        let rows = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} {filtro} ORDER BY criada_em DESC, seq DESC LIMIT $3 OFFSET $4"
        ))
        .bind(conta.0)
        .bind(status)
        .bind(i64::from(size))
        .bind(i64::from(page.max(1) - 1) * i64::from(size))
        .fetch_all(&self.pool)
        .await?;
        let itens = rows.iter().map(recarga_de).collect::<Result<Vec<_>, _>>()?;
        Ok((itens, total.unsigned_abs()))
    }

    async fn recargas_pendentes(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        let rows = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE status = 'Pendente' AND qr_code <> '' ORDER BY criada_em, seq LIMIT $1"
    ))
    .bind(i64::from(limite))
    .fetch_all(&self.pool)
    .await?;
        rows.iter().map(recarga_de).collect()
    }

    /// The conditional `UPDATE ... WHERE status = 'Pendente'` takes the row lock: a concurrent
    /// confirmation waits for it, then re-checks the condition, finds `Confirmado` and changes
    /// nothing. The credit commits or rolls back with the transition.
    async fn confirmar_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmacao, StoreError> {
        let mut tx = self.pool.begin().await?;
        let movida = sqlx::query(&format!(
            "UPDATE recargas SET status = 'Confirmado', confirmada_em = $1
         WHERE payment_id = $2 AND status = 'Pendente' AND qr_code <> ''
         RETURNING {COLUNAS_RECARGA}"
        ))
        .bind(em)
        .bind(sem_nul(payment_id))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = movida else {
            let atual = sqlx::query(&format!(
                "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = $1"
            ))
            .bind(sem_nul(payment_id))
            .fetch_optional(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(match atual {
                Some(r) => Confirmacao::JaFinal(recarga_de(&r)?),
                None => Confirmacao::NaoEncontrada,
            });
        };
        let recarga = recarga_de(&row)?;
        let total = recarga.valor + recarga.bonus;
        sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos + $1, legado = FALSE WHERE id = $2",
        )
        .bind(total.0)
        .bind(recarga.conta.0)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
        "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
         VALUES ($1, 'credito', $2, 'recarga', $3, $4)",
    )
    .bind(recarga.conta.0)
    .bind(total.0)
    .bind(recarga.id.to_string())
    .bind(em)
    .execute(&mut *tx)
    .await?;
        tx.commit().await?;
        Ok(Confirmacao::Creditada(recarga))
    }
}
