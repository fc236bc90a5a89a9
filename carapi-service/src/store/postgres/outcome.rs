//! The outcome of a transaction whose `COMMIT` reply was lost (the connection dropped after
//! the `COMMIT` was sent): PostgreSQL may have committed it or not. It is learned on a new
//! connection (never the pool's, which may hold other connections to a server that went away):
//! lock the row the transaction had locked, which waits until that transaction is over on the
//! server (committed, or rolled back when its connection closed), then read whether its rows
//! are there. A charge is found by its id (`consultas.request_id`); a top-up confirmation by the
//! top-up's state and instant.
//!
//! The lookup is retried for a few seconds (the server may be restarting); when it still
//! fails, the outcome is unknown ([`StoreError::ReplyLost`]).

use std::time::Duration;

use chrono::{DateTime, SubsecRound, Utc};
use sqlx::postgres::PgConnection;
use sqlx::{Connection, PgPool};
use uuid::Uuid;

use super::historico::consulta_of;
use super::rows::{RECARGA_COLUMNS, recarga_of};
use crate::store::{Confirmation, ContaId, Recarga, RecordedConsulta, StoreError};

/// Waits before each attempt of a lookup (about 6 s in all).
const WAITS_MS: [u64; 7] = [0, 100, 200, 400, 800, 1600, 3200];

/// How long a lookup waits for the lock of the transaction whose outcome it learns.
const LOCK_WAIT: &str = "10s";

/// Runs `f` on a new connection, retried per [`WAITS_MS`]; the last error when all fail.
async fn on_fresh_connection<T, F>(pool: &PgPool, f: F) -> Result<T, StoreError>
where
    F: for<'c> Fn(&'c mut PgConnection) -> futures::future::BoxFuture<'c, Result<T, StoreError>>,
{
    let options = pool.connect_options();
    let mut last = StoreError::ReplyLost("nenhuma tentativa".into());
    for ms in WAITS_MS {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        let mut conn = match PgConnection::connect_with(&options).await {
            Ok(c) => c,
            Err(e) => {
                last = e.into();
                continue;
            }
        };
        let r = f(&mut conn).await;
        let _ = conn.close().await;
        match r {
            Ok(v) => return Ok(v),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The history row of the charge `request_id` of `conta` made at `em`, once the transaction that
/// held the account row is over; `None` when it was not committed.
pub(super) async fn cobranca(
    pool: &PgPool,
    conta: ContaId,
    request_id: Uuid,
    at: DateTime<Utc>,
) -> Result<Option<RecordedConsulta>, StoreError> {
    on_fresh_connection(pool, |conn| {
        Box::pin(async move {
            let mut tx = conn.begin().await?;
            sqlx::query(&format!("SET LOCAL lock_timeout = '{LOCK_WAIT}'"))
                .execute(&mut *tx)
                .await?;
            sqlx::query("SELECT 1 FROM contas WHERE id = $1 FOR UPDATE")
                .bind(conta.0)
                .execute(&mut *tx)
                .await?;
            // A charge's row is at `em` or later (never before the account's previous row).
            let row = sqlx::query(
                "SELECT id, data, endpoint, chave, status_http, cobrado, valor_centavos,
                        saldo_antes, saldo_depois
                 FROM consultas WHERE conta_id = $1 AND data >= $2 AND pedido = $3",
            )
            .bind(conta.0)
            .bind(at)
            .bind(request_id)
            .fetch_optional(&mut *tx)
            .await?;
            tx.rollback().await?;
            row.as_ref().map(consulta_of).transpose()
        })
    })
    .await
}

/// The outcome of confirming `confirmada` (the top-up as the plan would store it) when the
/// reply of its `COMMIT` was lost with `erro`: credited when the top-up is now confirmed at
/// the plan's instant, already final when confirmed otherwise, `erro` when it is still pending
/// (nothing was committed).
///
/// # Errors
/// `erro` when nothing was committed; [`StoreError::ReplyLost`] when the outcome could
/// not be learned.
pub(super) async fn confirmation(
    pool: &PgPool,
    error: sqlx::Error,
    confirmed: &Recarga,
) -> Result<Confirmation, StoreError> {
    let id = confirmed.id;
    let atual = on_fresh_connection(pool, |conn| {
        Box::pin(async move {
            let mut tx = conn.begin().await?;
            sqlx::query(&format!("SET LOCAL lock_timeout = '{LOCK_WAIT}'"))
                .execute(&mut *tx)
                .await?;
            let row = sqlx::query(&format!(
                "SELECT {RECARGA_COLUMNS} FROM recargas WHERE id = $1 FOR UPDATE"
            ))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            tx.rollback().await?;
            row.as_ref().map(recarga_of).transpose()
        })
    })
    .await
    .map_err(|e| StoreError::unknown_outcome(&error, &e))?;
    match atual {
        Some(r)
            if r.status == confirmed.status
                && to_micros(r.confirmed_at) == to_micros(confirmed.confirmed_at) =>
        {
            Ok(Confirmation::Credited(r))
        }
        Some(r) if r.status != carapi_sdk::RecargaStatus::Pendente => {
            Ok(Confirmation::AlreadyFinal(r))
        }
        _ => Err(error.into()),
    }
}

/// `t` at PostgreSQL's precision (microseconds).
fn to_micros(t: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    t.map(|t| t.trunc_subsecs(6))
}
