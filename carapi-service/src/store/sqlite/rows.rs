//! Rows to domain types (accounts, top-ups) and the small helpers shared by the SQLite queries;
//! the records are decoded by their reader threads (`reader.rs`).

use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use crate::money::Centavos;
use crate::store::{Conta, ContaId, Recarga, StoreError};

pub(super) const DATE_TIME: &str = "%Y-%m-%d %H:%M:%S";

pub(super) const RECARGA_COLUMNS: &str = "id, conta_id, payment_id, valor_centavos, percentual_bonus, bonus_centavos, status, qr_code, criada_em, confirmada_em";

pub(super) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(super) fn instant(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

pub(super) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

pub(super) fn first_day_of_month(day: NaiveDate) -> (String, String) {
    let start = day.with_day(1).unwrap_or(day);
    let (y, m) = if day.month() == 12 {
        (day.year() + 1, 1)
    } else {
        (day.year(), day.month() + 1)
    };
    let end = NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(day);
    (start.to_string(), end.to_string())
}

pub(super) fn conta_state(row: &SqliteRow) -> Result<Conta, StoreError> {
    let documento: Option<String> = row.try_get("documento")?;
    Ok(Conta {
        id: ContaId(row.try_get("id")?),
        chave_hash: row.try_get("chave_hash")?,
        saldo: Centavos::new(row.try_get("saldo_centavos")?),
        legado: row.try_get::<i64, _>("legado")? != 0,
        documento: documento
            .map(|d| CpfCnpj::parse(&d).map_err(|_| corrupt("documento da conta")))
            .transpose()?,
        email: row.try_get("email")?,
        limite_diario: row
            .try_get::<Option<i64>, _>("limite_diario")?
            .map(|v| v as u32),
        limite_mensal: row
            .try_get::<Option<i64>, _>("limite_mensal_centavos")?
            .map(Centavos::new),
    })
}

pub(super) fn recarga_of(row: &SqliteRow) -> Result<Recarga, StoreError> {
    let id: String = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    Ok(Recarga {
        id: Uuid::parse_str(&id).map_err(|_| corrupt("id da recarga"))?,
        conta: ContaId(row.try_get("conta_id")?),
        payment_id: row.try_get("payment_id")?,
        valor: Centavos::new(row.try_get("valor_centavos")?),
        percentual_bonus: row.try_get::<i64, _>("percentual_bonus")? as u32,
        bonus: Centavos::new(row.try_get("bonus_centavos")?),
        status: status.parse().map_err(|_| corrupt("status da recarga"))?,
        qr_code: row.try_get("qr_code")?,
        created_at: instant(row.try_get("criada_em")?),
        confirmed_at: row.try_get::<Option<i64>, _>("confirmada_em")?.map(instant),
    })
}
