//! Rows to domain types, and the small helpers shared by the PostgreSQL queries.

use carapi_sdk::{CodigoCar, CpfCnpj};
use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use crate::dados::{Code, Imovel, Proprietario, stored};
use crate::money::Centavos;
use crate::store::{Conta, ContaId, OwnerImovel, Recarga, StoreError};

/// Columns of `recargas` in the order [`recarga_of`] reads them.
pub(super) const RECARGA_COLUMNS: &str = "id, conta_id, payment_id, valor_centavos, percentual_bonus, bonus_centavos, status, qr_code, criada_em, confirmada_em";

/// Columns of `imoveis` for [`imovel_of`] (decimals as text: their scale survives exactly).
pub(super) const IMOVEL_COLUMNS: &str = "codigo_car, status_imovel, condicao, nome_imovel,
    area_total_ha::text AS area_total_ha, modulos_fiscais::text AS modulos_fiscais, data_cadastro,
    data_atualizacao, tipo_imovel, municipio, codigo_municipio_ibge, uf, codigo_protocolo,
    latitude::text AS latitude, longitude::text AS longitude, matricula_numero, matricula_data,
    matricula_cartorio, tem_recibo";

pub(super) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

/// First day of `dia`'s month and first day of the next month (a half-open range).
/// A registry code column (`uf`, `status_imovel`, `tipo_imovel`) read back typed; a value that
/// is none of the codes is [`StoreError::Corrupt`].
fn code<T: Code>(row: &PgRow, column: &str) -> Result<T, StoreError> {
    let valor: Option<String> = row.try_get(column)?;
    stored(column, valor.as_deref()).map_err(corrupt)
}

pub(super) fn month_of(day: NaiveDate) -> (NaiveDate, NaiveDate) {
    let start = day.with_day(1).unwrap_or(day);
    let (y, m) = if day.month() == 12 {
        (day.year() + 1, 1)
    } else {
        (day.year(), day.month() + 1)
    };
    (start, NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(day))
}

pub(super) fn conta_state(row: &PgRow) -> Result<Conta, StoreError> {
    let documento: Option<String> = row.try_get("documento")?;
    Ok(Conta {
        id: ContaId(row.try_get("id")?),
        chave_hash: row.try_get("chave_hash")?,
        saldo: Centavos::new(row.try_get("saldo_centavos")?),
        legado: row.try_get("legado")?,
        documento: documento
            .map(|d| CpfCnpj::parse(&d).map_err(|_| corrupt("documento da conta")))
            .transpose()?,
        email: row.try_get("email")?,
        limite_diario: row
            .try_get::<Option<i64>, _>("limite_diario")?
            .map(|v| u32::try_from(v).map_err(|_| corrupt("limite diário")))
            .transpose()?,
        limite_mensal: row
            .try_get::<Option<i64>, _>("limite_mensal_centavos")?
            .map(Centavos::new),
    })
}

fn decimal(row: &PgRow, field: &str) -> Result<Option<Decimal>, StoreError> {
    row.try_get::<Option<String>, _>(field)?
        .map(|s| s.parse().map_err(|_| corrupt(format!("imóvel: {field}"))))
        .transpose()
}

/// A row of `imoveis::ITENS_DO_DOCUMENTO`.
pub(super) fn owner_item_of(row: &PgRow) -> Result<OwnerImovel, StoreError> {
    let codigo: String = row.try_get("codigo_car")?;
    Ok(OwnerImovel {
        codigo_car: CodigoCar::parse(&codigo).map_err(|_| corrupt("código CAR ilegível"))?,
        codigo_protocolo: row.try_get("codigo_protocolo")?,
        nome_imovel: row.try_get("nome_imovel")?,
        matricula_numero: row.try_get("matricula_numero")?,
        municipio: row.try_get("municipio")?,
        uf: code(row, "uf")?,
        area_total_ha: decimal(row, "area_total_ha")?.unwrap_or_default(),
    })
}

/// An `imoveis` row selected with [`IMOVEL_COLUMNS`], without its owners.
pub(super) fn imovel_of(row: &PgRow) -> Result<Imovel, StoreError> {
    let codigo: String = row.try_get("codigo_car")?;
    Ok(Imovel {
        codigo_car: CodigoCar::parse(&codigo).map_err(|_| corrupt("código CAR ilegível"))?,
        status_imovel: code(row, "status_imovel")?,
        condicao: row.try_get("condicao")?,
        nome_imovel: row.try_get("nome_imovel")?,
        area_total_ha: decimal(row, "area_total_ha")?.unwrap_or_default(),
        modulos_fiscais: decimal(row, "modulos_fiscais")?,
        data_cadastro: row.try_get("data_cadastro")?,
        data_atualizacao: row.try_get("data_atualizacao")?,
        tipo_imovel: code(row, "tipo_imovel")?,
        municipio: row.try_get("municipio")?,
        codigo_municipio_ibge: u32::try_from(row.try_get::<i64, _>("codigo_municipio_ibge")?)
            .map_err(|_| corrupt("código IBGE"))?,
        uf: code(row, "uf")?,
        codigo_protocolo: row.try_get("codigo_protocolo")?,
        latitude: decimal(row, "latitude")?,
        longitude: decimal(row, "longitude")?,
        matricula_numero: row.try_get("matricula_numero")?,
        matricula_data: row.try_get("matricula_data")?,
        matricula_cartorio: row.try_get("matricula_cartorio")?,
        proprietarios: Vec::new(),
        has_recibo: row.try_get("tem_recibo")?,
    })
}

pub(super) fn recarga_of(row: &PgRow) -> Result<Recarga, StoreError> {
    let status: String = row.try_get("status")?;
    Ok(Recarga {
        id: row.try_get("id")?,
        conta: ContaId(row.try_get("conta_id")?),
        payment_id: row.try_get("payment_id")?,
        valor: Centavos::new(row.try_get("valor_centavos")?),
        percentual_bonus: u32::try_from(row.try_get::<i64, _>("percentual_bonus")?)
            .map_err(|_| corrupt("percentual de bônus"))?,
        bonus: Centavos::new(row.try_get("bonus_centavos")?),
        status: status.parse().map_err(|_| corrupt("status da recarga"))?,
        qr_code: row.try_get("qr_code")?,
        created_at: row.try_get("criada_em")?,
        confirmed_at: row.try_get("confirmada_em")?,
    })
}

/// The owners of `codigo`, in their stored order.
pub(super) async fn proprietarios_of(
    pool: &PgPool,
    codigo: &str,
) -> Result<Vec<Proprietario>, StoreError> {
    let rows = sqlx::query(
        "SELECT documento, nome FROM imovel_proprietarios WHERE codigo_car = $1 ORDER BY ordem",
    )
    .bind(codigo)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let d: String = r.try_get("documento")?;
            Ok(Proprietario {
                documento: CpfCnpj::parse(&d).map_err(|_| corrupt("documento ilegível"))?,
                nome: r.try_get("nome")?,
            })
        })
        .collect()
}
