//! Top-ups (reuse, listing, the exactly-once confirmation) and the simulated PSP's book.

use async_trait::async_trait;
use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::SqliteStore;
use super::linhas::{COLUNAS_RECARGA, ms, recarga_de};
use crate::money::Centavos;
use crate::store::{Confirmacao, ContaId, Recarga, RecargasStore, StoreError};

#[async_trait]
impl RecargasStore for SqliteStore {
    async fn recarga_reaproveitavel(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
         AND criada_em >= ? ORDER BY criada_em DESC LIMIT 1"
    ))
    .bind(conta.0)
    .bind(valor.0)
    .bind(ms(desde))
    .fetch_optional(&self.leitura)
    .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn inserir_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        let mut tx = self.imediata().await?;
        let existente = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
         AND criada_em >= ? ORDER BY criada_em DESC LIMIT 1"
    ))
    .bind(nova.conta.0)
    .bind(nova.valor.0)
    .bind(ms(desde))
    .fetch_optional(&mut *tx)
    .await?;
        if let Some(row) = existente {
            tx.commit().await?;
            return Ok((recarga_de(&row)?, true));
        }
        sqlx::query(&format!(
            "INSERT INTO recargas ({COLUNAS_RECARGA}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(nova.id.to_string())
        .bind(nova.conta.0)
        .bind(&nova.payment_id)
        .bind(nova.valor.0)
        .bind(i64::from(nova.percentual_bonus))
        .bind(nova.bonus.0)
        .bind(nova.status.as_str())
        .bind(&nova.qr_code)
        .bind(ms(nova.criada_em))
        .bind(nova.confirmada_em.map(ms))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((nova, false))
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ? AND conta_id = ?"
        ))
        .bind(id.to_string())
        .bind(conta.0)
        .fetch_optional(&self.leitura)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recarga_por_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ?"
        ))
        .bind(id.to_string())
        .fetch_optional(&self.leitura)
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
        let filtro = if status.is_some() {
            " AND status = ?"
        } else {
            ""
        };
        let sql_total = format!("SELECT COUNT(*) FROM recargas WHERE conta_id = ?{filtro}");
        let mut q = sqlx::query_scalar(&sql_total).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let total: i64 = q.fetch_one(&self.leitura).await?;
        let sql = format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ?{filtro} ORDER BY criada_em DESC, rowid DESC LIMIT ? OFFSET ?"
        );
        let mut q = sqlx::query(&sql).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let rows = q
            .bind(i64::from(size))
            .bind(i64::from(page.max(1) - 1) * i64::from(size))
            .fetch_all(&self.leitura)
            .await?;
        let itens = rows.iter().map(recarga_de).collect::<Result<Vec<_>, _>>()?;
        Ok((itens, total as u64))
    }

    async fn recargas_pendentes(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        let rows = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE status = 'Pendente' ORDER BY criada_em LIMIT ?"
    ))
    .bind(i64::from(limite))
    .fetch_all(&self.leitura)
    .await?;
        rows.iter().map(recarga_de).collect()
    }

    async fn confirmar_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmacao, StoreError> {
        let mut tx = self.imediata().await?;
        let movida = sqlx::query(&format!(
        "UPDATE recargas SET status = 'Confirmado', confirmada_em = ? WHERE payment_id = ? AND status = 'Pendente'
         RETURNING {COLUNAS_RECARGA}"
    ))
    .bind(ms(em))
    .bind(payment_id)
    .fetch_optional(&mut *tx)
    .await?;
        let Some(row) = movida else {
            let atual = sqlx::query(&format!(
                "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = ?"
            ))
            .bind(payment_id)
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
            "UPDATE contas SET saldo_centavos = saldo_centavos + ?, legado = 0 WHERE id = ?",
        )
        .bind(total.0)
        .bind(recarga.conta.0)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
        "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'credito', ?, 'recarga', ?, ?)",
    )
    .bind(recarga.conta.0)
    .bind(total.0)
    .bind(recarga.id.to_string())
    .bind(ms(em))
    .execute(&mut *tx)
    .await?;
        tx.commit().await?;
        Ok(Confirmacao::Creditada(recarga))
    }
}
