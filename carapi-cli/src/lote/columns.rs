//! A batch record as typed columns, one per field, for the spreadsheet and map outputs
//! ([`super::export`]): numbers as numbers (areas, fiscal modules, decimal degrees), dates as
//! dates (Brasília local time), booleans as booleans.
//!
//! Columns: the record's own (`chave`, `status`, `httpStatus`, `codigoErro`, `mensagem`,
//! `cobrado`, `arquivo`; with the archive configured, `origem` (`api` or `acervo`) and
//! `compradoEm`, when the answer was bought), then the API's fields under their contract names (`codigoCar`,
//! `areaTotalHa`, ...), with `latitude`/`longitude` in decimal degrees (negative south/west, from
//! the SDK's DMS accessors) and the registry's DMS text in `latitudeDms`/`longitudeDms`.
//! A `proprietario` record gives one row per CAR of the document (at least one row per key).

use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse, ProprietarioResponse};
use chrono::NaiveDateTime;
use chrono_tz::America::Sao_Paulo;
use rust_decimal::Decimal;

use super::kind::BatchKind;
use super::record::Record;

/// One typed cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ColumnValue {
    /// No value.
    Empty,
    /// Text.
    Text(String),
    /// A number (hectares, fiscal modules, degrees, counts).
    Number(Decimal),
    /// A local Brasília date and time.
    DateTime(NaiveDateTime),
    /// A date without a time (the registration's `matriculaData`).
    Date(chrono::NaiveDate),
    /// A boolean.
    Bool(bool),
}

impl ColumnValue {
    fn opt(s: &Option<String>) -> ColumnValue {
        s.as_deref()
            .map_or(ColumnValue::Empty, |s| ColumnValue::Text(s.to_owned()))
    }

    fn num(v: Option<Decimal>) -> ColumnValue {
        v.map_or(ColumnValue::Empty, ColumnValue::Number)
    }
}

/// The record's own columns, named as in the `.jsonl` records (the contract's camelCase).
const COMMON: [&str; 7] = [
    "chave",
    "status",
    "httpStatus",
    "codigoErro",
    "mensagem",
    "cobrado",
    "arquivo",
];

/// Where each answer came from, with the archive configured ([`names`]'s `origin`).
const ORIGIN: [&str; 2] = ["origem", "compradoEm"];

const CAR: [&str; 20] = [
    "codigoCar",
    "nomeImovel",
    "areaTotalHa",
    "modulosFiscais",
    "dataCadastro",
    "tipoImovel",
    "municipio",
    "uf",
    "matriculaNumero",
    "matriculaData",
    "matriculaCartorio",
    "codigoProtocolo",
    "latitude",
    "longitude",
    "latitudeDms",
    "longitudeDms",
    "dataConsulta",
    "dataExpiracao",
    "cache",
    "sandbox",
];

const COMPLETO: [&str; 2] = ["proprietariosNomes", "proprietariosCpfs"];

const PROPRIETARIO: [&str; 10] = [
    "registroCar",
    "codigoProtocolo",
    "nomeImovel",
    "matriculaNumero",
    "municipio",
    "uf",
    "areaTotalHa",
    "proprietarioConsultado",
    "total",
    "truncado",
];

/// The column names of a batch of `kind`, in order; `origin`: with the archive's columns.
pub(crate) fn names(kind: BatchKind, origin: bool) -> Vec<&'static str> {
    let mut c = COMMON.to_vec();
    if origin {
        c.extend(ORIGIN);
    }
    match kind {
        BatchKind::Car => c.extend(CAR),
        BatchKind::Completo => {
            c.extend(CAR);
            c.extend(COMPLETO);
        }
        BatchKind::Proprietario => c.extend(PROPRIETARIO),
        BatchKind::Recibo => {}
    }
    c
}

/// The rows of one record (as long as [`names`] with the same `origin`); fields of an answer
/// that cannot be read are empty.
pub(crate) fn rows(kind: BatchKind, r: &Record, origin: bool) -> Vec<Vec<ColumnValue>> {
    let mut common = vec![
        ColumnValue::Text(r.key.clone()),
        ColumnValue::Text(r.status.as_str().to_owned()),
        r.http_status.map_or(ColumnValue::Empty, |s| {
            ColumnValue::Number(Decimal::from(s))
        }),
        ColumnValue::opt(&r.error_code),
        ColumnValue::opt(&r.message),
        ColumnValue::Bool(r.cobrado),
        ColumnValue::opt(&r.file),
    ];
    if origin {
        common.push(ColumnValue::opt(&r.origin));
        common.push(r.comprado_em.map_or(ColumnValue::Empty, |t| {
            ColumnValue::DateTime(t.with_timezone(&Sao_Paulo).naive_local())
        }));
    }
    let n = names(kind, origin).len() - common.len();
    let extras: Vec<Vec<ColumnValue>> = match (kind, &r.response) {
        (BatchKind::Car, Some(v)) => {
            serde_json::from_value::<CarResponse<CarDadosBasicos>>(v.clone())
                .ok()
                .map(|c| vec![car(&c.dados, &c)])
                .unwrap_or_default()
        }
        (BatchKind::Completo, Some(v)) => {
            serde_json::from_value::<CarResponse<CarDadosCompletos>>(v.clone())
                .ok()
                .map(|c| {
                    let mut l = car(&c.dados.basicos, &c);
                    l.push(ColumnValue::opt(&c.dados.proprietarios_nomes));
                    l.push(ColumnValue::opt(&c.dados.proprietarios_cpfs));
                    vec![l]
                })
                .unwrap_or_default()
        }
        (BatchKind::Proprietario, Some(v)) => {
            serde_json::from_value::<ProprietarioResponse>(v.clone())
                .ok()
                .map(|p| proprietario(&p))
                .unwrap_or_default()
        }
        _ => vec![],
    };
    let extras = if extras.is_empty() {
        vec![vec![ColumnValue::Empty; n]]
    } else {
        extras
    };
    extras
        .into_iter()
        .map(|e| common.iter().cloned().chain(e).collect())
        .collect()
}

fn car<T>(d: &CarDadosBasicos, r: &CarResponse<T>) -> Vec<ColumnValue> {
    let brasilia = |t: chrono::DateTime<chrono::FixedOffset>| {
        ColumnValue::DateTime(t.with_timezone(&Sao_Paulo).naive_local())
    };
    vec![
        ColumnValue::Text(d.codigo_car.clone()),
        ColumnValue::opt(&d.nome_imovel),
        ColumnValue::num(d.area_total()),
        ColumnValue::num(d.modulos()),
        d.data_cadastro_em()
            .map_or(ColumnValue::Empty, ColumnValue::DateTime),
        ColumnValue::opt(&d.tipo_imovel),
        ColumnValue::opt(&d.municipio),
        ColumnValue::opt(&d.uf),
        ColumnValue::opt(&d.matricula_numero),
        date_or_text(d.matricula_data.as_deref()),
        ColumnValue::opt(&d.matricula_cartorio),
        ColumnValue::opt(&d.codigo_protocolo),
        ColumnValue::num(d.latitude_graus()),
        ColumnValue::num(d.longitude_graus()),
        ColumnValue::opt(&d.latitude),
        ColumnValue::opt(&d.longitude),
        brasilia(r.data_consulta),
        r.data_expiracao.map_or(ColumnValue::Empty, brasilia),
        ColumnValue::Bool(r.cache),
        ColumnValue::Bool(r.sandbox),
    ]
}

/// A registry date (`dd/mm/aaaa`, or with the time as `dataCadastro` has it) as a date; text
/// when it is neither, nothing when absent.
fn date_or_text(s: Option<&str>) -> ColumnValue {
    let Some(s) = s else {
        return ColumnValue::Empty;
    };
    if let Ok(d) = carapi_sdk::domain::br::parse_data(s) {
        return ColumnValue::DateTime(d);
    }
    chrono::NaiveDate::parse_from_str(s.trim(), "%d/%m/%Y")
        .map_or_else(|_| ColumnValue::Text(s.to_owned()), ColumnValue::Date)
}

fn proprietario(p: &ProprietarioResponse) -> Vec<Vec<ColumnValue>> {
    let area = |s: &Option<String>| {
        ColumnValue::num(
            s.as_deref()
                .and_then(|s| carapi_sdk::domain::br::parse_decimal(s).ok()),
        )
    };
    let total = ColumnValue::Number(Decimal::from(p.total));
    p.itens
        .iter()
        .map(|i| {
            vec![
                ColumnValue::Text(i.registro_car.clone()),
                ColumnValue::opt(&i.codigo_protocolo),
                ColumnValue::opt(&i.nome_imovel),
                ColumnValue::opt(&i.matricula_numero),
                ColumnValue::opt(&i.municipio),
                ColumnValue::opt(&i.uf),
                area(&i.area_total_ha),
                ColumnValue::opt(&i.proprietario_consultado),
                total.clone(),
                ColumnValue::Bool(p.truncado),
            ]
        })
        .collect()
}

/// The decimal degrees `(longitude, latitude)` of a row of `kind` (with the origin columns
/// when `origin`), when it has them.
pub(crate) fn coordinates(
    kind: BatchKind,
    origin: bool,
    row: &[ColumnValue],
) -> Option<(Decimal, Decimal)> {
    let cols = names(kind, origin);
    let pos = |n: &str| cols.iter().position(|c| *c == n);
    match (row.get(pos("longitude")?), row.get(pos("latitude")?)) {
        (Some(ColumnValue::Number(lon)), Some(ColumnValue::Number(lat))) => Some((*lon, *lat)),
        _ => None,
    }
}
