//! The retention of uncharged error rows ([`crate::store::ConsultasStore::remove_uncharged`]):
//! when the account's oldest error row not deleted yet is older than the cut (read without a
//! lock), one transaction locks the account row (as an insert does, so none runs in between), reads
//! the account's oldest error rows not deleted yet (index `consultas_conta_erro`) and what was
//! removed so far, plans with [`retencao::plan_retencao`] and applies the plan.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::money::Centavos;
use crate::money::retencao::{self, ErrorRow, RetencaoPlan};
use crate::store::{ContaId, StoreError};

type RowRead = (i64, String, i64, bool, i64, DateTime<Utc>, i64, i64, i64);

/// See the module documentation.
pub(super) async fn remove(
    pool: &PgPool,
    conta: ContaId,
    antes: DateTime<Utc>,
    limite: u32,
) -> Result<u64, StoreError> {
    // Most passes find nothing to delete: they lock no account.
    let first: Option<DateTime<Utc>> = sqlx::query_scalar(
        "SELECT data FROM consultas
         WHERE conta_id = $1 AND status_http <> 200 AND ordem_status > COALESCE(
             (SELECT removidas FROM consultas_removidas WHERE conta_id = $1 AND endpoint = ''), 0)
         ORDER BY ordem_status LIMIT 1",
    )
    .bind(conta.0)
    .fetch_optional(pool)
    .await?;
    if first.is_none_or(|d| d >= antes) {
        return Ok(0);
    }
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT 1 FROM contas WHERE id = $1 FOR UPDATE")
        .bind(conta.0)
        .execute(&mut *tx)
        .await?;
    let removidas: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT endpoint, removidas, sucessos_antes FROM consultas_removidas WHERE conta_id = $1",
    )
    .bind(conta.0)
    .fetch_all(&mut *tx)
    .await?;
    let (atual, per) = retencao::removidas_of(removidas);
    let lines: Vec<RowRead> = sqlx::query_as(
        "SELECT id, endpoint, status_http, cobrado, valor_centavos, data, ordem_conta,
                ordem_endpoint, ordem_status
         FROM consultas
         WHERE conta_id = $1 AND status_http <> 200 AND ordem_status > $2
         ORDER BY ordem_status LIMIT $3",
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
    let n = sqlx::query("DELETE FROM consultas WHERE id = ANY($1)")
        .bind(&plan.ids)
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
        cobrado,
        valor: Centavos::new(valor),
        data,
        conta_ordinal,
        endpoint_ordinal,
        error_ordinal,
    }
}

/// Writes what the plan says besides the deletion: what was removed per account and endpoint,
/// the hourly usage counters.
async fn apply(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    conta: ContaId,
    plan: RetencaoPlan,
) -> Result<(), StoreError> {
    let groups = std::iter::once((String::new(), plan.conta)).chain(plan.endpoints);
    for (endpoint, r) in groups {
        sqlx::query(
            "INSERT INTO consultas_removidas (conta_id, endpoint, removidas, sucessos_antes)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (conta_id, endpoint) DO UPDATE
             SET removidas = EXCLUDED.removidas, sucessos_antes = EXCLUDED.sucessos_antes",
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
            "UPDATE consultas_uso_hora SET quantidade = quantidade - $1
             WHERE conta_id = $2 AND hora = $3 AND endpoint = $4",
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
