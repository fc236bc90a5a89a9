//! Rows to domain types, and the small helpers shared by the SQLite queries.

use std::str::FromStr;

use carapi_sdk::{CodigoCar, CpfCnpj};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqlitePool};
use uuid::Uuid;

use crate::dados::{Imovel, Proprietario};
use crate::money::Centavos;
use crate::store::{Conta, ContaId, ImovelDoDono, Recarga, StoreError};

pub(super) const DATA_HORA: &str = "%Y-%m-%d %H:%M:%S";

pub(super) const COLUNAS_RECARGA: &str = "id, conta_id, payment_id, valor_centavos, percentual_bonus, bonus_centavos, status, qr_code, criada_em, confirmada_em";

pub(super) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(super) fn instante(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

pub(super) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

pub(super) fn primeiro_dia_mes(dia: NaiveDate) -> (String, String) {
    let inicio = dia.with_day(1).unwrap_or(dia);
    let (y, m) = if dia.month() == 12 {
        (dia.year() + 1, 1)
    } else {
        (dia.year(), dia.month() + 1)
    };
    let fim = NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(dia);
    (inicio.to_string(), fim.to_string())
}

pub(super) fn conta_de(row: &SqliteRow) -> Result<Conta, StoreError> {
    let documento: Option<String> = row.try_get("documento")?;
    Ok(Conta {
        id: ContaId(row.try_get("id")?),
        chave_hash: row.try_get("chave_hash")?,
        saldo: Centavos(row.try_get("saldo_centavos")?),
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
            .map(Centavos),
    })
}

fn decimal(s: Option<String>, campo: &str) -> Result<Option<Decimal>, StoreError> {
    s.map(|s| Decimal::from_str(&s).map_err(|_| corrupt(format!("imóvel: {campo}"))))
        .transpose()
}

fn data_hora(s: Option<String>, campo: &str) -> Result<Option<NaiveDateTime>, StoreError> {
    s.map(|s| {
        NaiveDateTime::parse_from_str(&s, DATA_HORA)
            .map_err(|_| corrupt(format!("imóvel: {campo}")))
    })
    .transpose()
}

/// A row of `imoveis::ITENS_DO_DOCUMENTO`.
pub(super) fn item_do_dono_de(row: &SqliteRow) -> Result<ImovelDoDono, StoreError> {
    let codigo: String = row.try_get("codigo_car")?;
    Ok(ImovelDoDono {
        codigo_car: CodigoCar::parse(&codigo)
            .map_err(|_| corrupt(format!("código CAR {codigo}")))?,
        codigo_protocolo: row.try_get("codigo_protocolo")?,
        nome_imovel: row.try_get("nome_imovel")?,
        matricula_numero: row.try_get("matricula_numero")?,
        municipio: row.try_get("municipio")?,
        uf: row.try_get("uf")?,
        area_total_ha: decimal(row.try_get("area_total_ha")?, "area")?.unwrap_or_default(),
    })
}

pub(super) fn imovel_de(row: &SqliteRow) -> Result<Imovel, StoreError> {
    let codigo: String = row.try_get("codigo_car")?;
    Ok(Imovel {
        codigo_car: CodigoCar::parse(&codigo)
            .map_err(|_| corrupt(format!("código CAR {codigo}")))?,
        status_imovel: row.try_get("status_imovel")?,
        condicao: row.try_get("condicao")?,
        nome_imovel: row.try_get("nome_imovel")?,
        area_total_ha: decimal(row.try_get("area_total_ha")?, "area")?.unwrap_or_default(),
        modulos_fiscais: decimal(row.try_get("modulos_fiscais")?, "modulos")?,
        data_cadastro: data_hora(row.try_get("data_cadastro")?, "data_cadastro")?
            .unwrap_or_default(),
        data_atualizacao: data_hora(row.try_get("data_atualizacao")?, "data_atualizacao")?,
        tipo_imovel: row.try_get("tipo_imovel")?,
        municipio: row.try_get("municipio")?,
        codigo_municipio_ibge: row.try_get::<i64, _>("codigo_municipio_ibge")? as u32,
        uf: row.try_get("uf")?,
        codigo_protocolo: row.try_get("codigo_protocolo")?,
        latitude: decimal(row.try_get("latitude")?, "latitude")?,
        longitude: decimal(row.try_get("longitude")?, "longitude")?,
        matricula_numero: row.try_get("matricula_numero")?,
        matricula_data: row.try_get("matricula_data")?,
        matricula_cartorio: row.try_get("matricula_cartorio")?,
        proprietarios: Vec::new(),
        tem_recibo: row.try_get::<i64, _>("tem_recibo")? != 0,
    })
}

pub(super) fn recarga_de(row: &SqliteRow) -> Result<Recarga, StoreError> {
    let id: String = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    Ok(Recarga {
        id: Uuid::parse_str(&id).map_err(|_| corrupt("id da recarga"))?,
        conta: ContaId(row.try_get("conta_id")?),
        payment_id: row.try_get("payment_id")?,
        valor: Centavos(row.try_get("valor_centavos")?),
        percentual_bonus: row.try_get::<i64, _>("percentual_bonus")? as u32,
        bonus: Centavos(row.try_get("bonus_centavos")?),
        status: status.parse().map_err(|_| corrupt("status da recarga"))?,
        qr_code: row.try_get("qr_code")?,
        criada_em: instante(row.try_get("criada_em")?),
        confirmada_em: row
            .try_get::<Option<i64>, _>("confirmada_em")?
            .map(instante),
    })
}

pub(super) async fn proprietarios_de(
    pool: &SqlitePool,
    codigo: &str,
) -> Result<Vec<Proprietario>, StoreError> {
    let rows = sqlx::query(
        "SELECT documento, nome FROM imovel_proprietarios WHERE codigo_car = ? ORDER BY ordem",
    )
    .bind(codigo)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let d: String = r.try_get("documento")?;
            Ok(Proprietario {
                documento: CpfCnpj::parse(&d).map_err(|_| corrupt(format!("documento {d}")))?,
                nome: r.try_get("nome")?,
            })
        })
        .collect()
}
