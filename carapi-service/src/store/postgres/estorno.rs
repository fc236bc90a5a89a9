//! The reversal of a journaled charge ([`crate::store::ConsultasStore::estornar_cobranca`]):
//! one transaction locks the account row (as a charge does, so none runs in between), reads
//! the charge's history row, plans with [`estorno::plan_estorno`] and applies the plan.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::money::Centavos;
use crate::money::estorno::{self, ChargedRow, EstornoDecision};
use crate::store::{ContaId, Estorno, StoreError};

/// See the module documentation.
pub(super) async fn estornar(
    pool: &PgPool,
    conta: ContaId,
    request_id: Uuid,
    at: DateTime<Utc>,
) -> Result<Estorno, StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT 1 FROM contas WHERE id = $1 FOR UPDATE")
        .bind(conta.0)
        .execute(&mut *tx)
        .await?;
    let line: Option<(i64, DateTime<Utc>, i64, bool, i64, String)> = sqlx::query_as(
        "SELECT id, data, status_http, cobrado, valor_centavos, endpoint
         FROM consultas WHERE conta_id = $1 AND data >= $2 AND pedido = $3",
    )
    .bind(conta.0)
    .bind(at)
    .bind(request_id)
    .fetch_optional(&mut *tx)
    .await?;
    let got_one = line
        .as_ref()
        .map(|&(_, data, status, cobrado, valor, _)| ChargedRow {
            status: u16::try_from(status).unwrap_or(0),
            cobrado,
            valor: Centavos::new(valor),
            data,
        });
    let (p, id, data, endpoint) = match (estorno::plan_estorno(got_one), line) {
        (EstornoDecision::Estornar(p), Some((id, data, _, _, _, endpoint))) => {
            (p, id, data, endpoint)
        }
        (EstornoDecision::AlreadyEstornada, _) => return Ok(Estorno::AlreadyEstornada),
        _ => return Ok(Estorno::NotCobrada),
    };
    let valor = p.credit.get();
    sqlx::query("UPDATE contas SET saldo_centavos = saldo_centavos + $1 WHERE id = $2")
        .bind(valor)
        .bind(conta.0)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
         VALUES ($1, 'credito', $2, 'estorno', $3, $4)",
    )
    .bind(conta.0)
    .bind(valor)
    .bind(id.to_string())
    .bind(data)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE consultas SET cobrado = false, valor_centavos = 0, saldo_depois = saldo_antes
         WHERE id = $1 AND cobrado",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE uso_diario SET cobradas = cobradas - 1, gasto_centavos = gasto_centavos - $1
         WHERE conta_id = $2 AND dia = $3",
    )
    .bind(valor)
    .bind(conta.0)
    .bind(p.day)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE consultas_uso_hora SET valor_centavos = valor_centavos - $1
         WHERE conta_id = $2 AND hora = $3 AND endpoint = $4",
    )
    .bind(valor)
    .bind(conta.0)
    .bind(p.hour)
    .bind(&endpoint)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Estorno::Estornada { valor: p.credit })
}
