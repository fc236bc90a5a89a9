//! The retention of uncharged error rows ([`crate::store::ConsultasStore::remove_uncharged`]):
//! when the account's oldest error row not deleted yet is older than the cut (read without a
//! write lock), one `BEGIN IMMEDIATE` transaction (no insert of the writer thread in between)
//! reads the account's oldest error rows not deleted yet (index `consultas_conta_erro`) and
//! what was removed so far, plans with [`retencao::plan_retencao`] and applies the plan.

use chrono::{DateTime, Utc};

use super::SqliteStore;
use super::rows::{instant, ms};
use crate::money::Centavos;
use crate::money::retencao::{self, ErrorRow, RetencaoPlan};
use crate::store::{ContaId, StoreError};

type RowRead = (i64, String, i64, i64, i64, i64, i64, i64, i64);

/// See the module documentation.
pub(super) async fn remove(
    s: &SqliteStore,
    conta: ContaId,
    antes: DateTime<Utc>,
    limite: u32,
) -> Result<u64, StoreError> {
    // Most passes find nothing to delete: they take no write lock.
    let first: Option<i64> = sqlx::query_scalar(
        "SELECT data_ms FROM consultas INDEXED BY consultas_conta_erro
         WHERE conta_id = ?1 AND status_http <> 200 AND ordem_status > COALESCE(
             (SELECT removidas FROM consultas_removidas WHERE conta_id = ?1 AND endpoint = ''), 0)
         ORDER BY ordem_status LIMIT 1",
    )
    .bind(conta.0)
    .fetch_optional(&s.reading)
    .await?;
    if first.is_none_or(|d| d >= ms(antes)) {
        return Ok(0);
    }
    let mut tx = s.begin_immediate().await?;
    let removidas: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT endpoint, removidas, sucessos_antes FROM consultas_removidas WHERE conta_id = ?",
    )
    .bind(conta.0)
    .fetch_all(&mut *tx)
    .await?;
    let (atual, per) = retencao::removidas_of(removidas);
    let lines: Vec<RowRead> = sqlx::query_as(
        "SELECT id, endpoint, status_http, cobrado, valor_centavos, data_ms, ordem_conta,
                ordem_endpoint, ordem_status
         FROM consultas INDEXED BY consultas_conta_erro
         WHERE conta_id = ? AND status_http <> 200 AND ordem_status > ?
         ORDER BY ordem_status LIMIT ?",
    )
    .bind(conta.0)
    .bind(atual.erros)
    .bind(i64::from(limite))
    .fetch_all(&mut *tx)
    .await?;
    let lines: Vec<ErrorRow> = lines.into_iter().map(error_row).collect();
    let Some(plan) = retencao::plan_retencao(&lines, antes, atual, &per) else {
        return Ok(0);
    };
    let ids = serde_json::to_string(&plan.ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let n = sqlx::query("DELETE FROM consultas WHERE id IN (SELECT value FROM json_each(?))")
        .bind(ids)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    apply(&mut tx, conta, plan).await?;
    tx.commit().await?;
    Ok(n)
}

fn error_row(l: RowRead) -> ErrorRow {
    let (
        id,
        endpoint,
        status,
        cobrado,
        valor,
        data,
        conta_ordinal,
        endpoint_ordinal,
        error_ordinal,
    ) = l;
    ErrorRow {
        id,
        endpoint,
        // A status that is not one is read as 200: never deleted.
        status: u16::try_from(status).unwrap_or(200),
        cobrado: cobrado != 0,
        valor: Centavos::new(valor),
        data: instant(data),
        conta_ordinal,
        endpoint_ordinal,
        error_ordinal,
    }
}

/// Writes what the plan says besides the deletion: what was removed per account and endpoint,
/// the hourly usage counters.
async fn apply(
    tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>,
    conta: ContaId,
    plan: RetencaoPlan,
) -> Result<(), StoreError> {
    let groups = std::iter::once((String::new(), plan.conta)).chain(plan.endpoints);
    for (endpoint, r) in groups {
        sqlx::query(
            "INSERT INTO consultas_removidas (conta_id, endpoint, removidas, sucessos_antes)
             VALUES (?, ?, ?, ?)
             ON CONFLICT (conta_id, endpoint) DO UPDATE
             SET removidas = excluded.removidas, sucessos_antes = excluded.sucessos_antes",
        )
        .bind(conta.0)
        .bind(endpoint)
        .bind(r.erros)
        .bind(r.successes_before)
        .execute(&mut **tx)
        .await?;
    }
    for ((hour, endpoint), how_many) in plan.hours {
        sqlx::query(
            "UPDATE consultas_uso_hora SET quantidade = quantidade - ?
             WHERE conta_id = ? AND hora = ? AND endpoint = ?",
        )
        .bind(how_many)
        .bind(conta.0)
        .bind(hour)
        .bind(endpoint)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
