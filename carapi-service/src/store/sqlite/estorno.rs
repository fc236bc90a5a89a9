//! The reversal of a journaled charge ([`crate::store::ConsultasStore::estornar_cobranca`]):
//! one `BEGIN IMMEDIATE` transaction (no charge of the writer thread in between) reads the
//! charge's history row, plans with [`estorno::plan_estorno`] and applies the plan.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::SqliteStore;
use super::rows::{instant, ms};
use crate::money::Centavos;
use crate::money::estorno::{self, ChargedRow, EstornoDecision};
use crate::store::{ContaId, Estorno, StoreError};

/// See the module documentation.
pub(super) async fn estornar(
    s: &SqliteStore,
    conta: ContaId,
    request_id: Uuid,
    at: DateTime<Utc>,
) -> Result<Estorno, StoreError> {
    let mut tx = s.begin_immediate().await?;
    let line: Option<(i64, i64, i64, i64, i64, String)> = sqlx::query_as(
        "SELECT id, data_ms, status_http, cobrado, valor_centavos, endpoint
         FROM consultas WHERE conta_id = ? AND data_ms >= ? AND pedido = ?",
    )
    .bind(conta.0)
    .bind(ms(at))
    .bind(request_id.to_string())
    .fetch_optional(&mut *tx)
    .await?;
    let got_one = line
        .as_ref()
        .map(|&(_, data, status, cobrado, valor, _)| ChargedRow {
            status: u16::try_from(status).unwrap_or(0),
            cobrado: cobrado != 0,
            valor: Centavos::new(valor),
            data: instant(data),
        });
    let plan = match (estorno::plan_estorno(got_one), line) {
        (EstornoDecision::Estornar(p), Some((id, data, _, _, _, endpoint))) => {
            (p, id, data, endpoint)
        }
        (EstornoDecision::AlreadyEstornada, _) => return Ok(Estorno::AlreadyEstornada),
        _ => return Ok(Estorno::NotCobrada),
    };
    let (p, id, data, endpoint) = plan;
    let valor = p.credit.get();
    sqlx::query("UPDATE contas SET saldo_centavos = saldo_centavos + ? WHERE id = ?")
        .bind(valor)
        .bind(conta.0)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
         VALUES (?, 'credito', ?, 'estorno', ?, ?)",
    )
    .bind(conta.0)
    .bind(valor)
    .bind(id.to_string())
    .bind(data)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE consultas SET cobrado = 0, valor_centavos = 0, saldo_depois = saldo_antes
         WHERE id = ? AND cobrado = 1",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE uso_diario SET cobradas = cobradas - 1, gasto_centavos = gasto_centavos - ?
         WHERE conta_id = ? AND dia = ?",
    )
    .bind(valor)
    .bind(conta.0)
    .bind(p.day.to_string())
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "UPDATE consultas_uso_hora SET valor_centavos = valor_centavos - ?
         WHERE conta_id = ? AND hora = ? AND endpoint = ?",
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
