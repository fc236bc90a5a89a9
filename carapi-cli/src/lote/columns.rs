//! A batch record as typed columns, one per field, for the spreadsheet and map outputs
//! ([`super::exportar`]): numbers as numbers (areas, fiscal modules, decimal degrees), dates as
//! dates (Brasília local time), booleans as booleans.
//!
//! Columns: the record's own (`chave`, `status`, `httpStatus`, `codigoErro`, `mensagem`,
//! `cobrado`, `arquivo`), then the API's fields under their contract names (`codigoCar`,
//! `areaTotalHa`, ...), with `latitude`/`longitude` in decimal degrees (negative south/west, from
//! the SDK's DMS accessors) and the registry's DMS text in `latitudeDms`/`longitudeDms`.
//! A `proprietario` record gives one row per CAR of the document (at least one row per key).

use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse, ProprietarioResponse};
use chrono::NaiveDateTime;
use chrono_tz::America::Sao_Paulo;
use rust_decimal::Decimal;

use super::registro::Resultado;
use super::tipo::TipoLote;

/// One typed cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Valor {
    /// No value.
    Vazio,
    /// Text.
    Texto(String),
    /// A number (hectares, fiscal modules, degrees, counts).
    Numero(Decimal),
    /// A local Brasília date and time.
    DataHora(NaiveDateTime),
    /// A date without a time (the registration's `matriculaData`).
    Data(chrono::NaiveDate),
    /// A boolean.
    Booleano(bool),
}

impl Valor {
    fn opt(s: &Option<String>) -> Valor {
        s.as_deref()
            .map_or(Valor::Vazio, |s| Valor::Texto(s.to_owned()))
    }

    fn num(v: Option<Decimal>) -> Valor {
        v.map_or(Valor::Vazio, Valor::Numero)
    }
}

/// The record's own columns, named as in the `.jsonl` records (the contract's camelCase).
const COMUNS: [&str; 7] = [
    "chave",
    "status",
    "httpStatus",
    "codigoErro",
    "mensagem",
    "cobrado",
    "arquivo",
];

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

/// The column names of a batch of `tipo`, in order.
pub fn colunas(tipo: TipoLote) -> Vec<&'static str> {
    let mut c = COMUNS.to_vec();
    match tipo {
        TipoLote::Car => c.extend(CAR),
        TipoLote::Completo => {
            c.extend(CAR);
            c.extend(COMPLETO);
        }
        TipoLote::Proprietario => c.extend(PROPRIETARIO),
        TipoLote::Recibo => {}
    }
    c
}

/// The rows of one record (as long as [`colunas`]); fields of an answer that cannot be read
/// are empty.
pub fn linhas(tipo: TipoLote, r: &Resultado) -> Vec<Vec<Valor>> {
    let comuns = [
        Valor::Texto(r.chave.clone()),
        Valor::Texto(r.status.as_str().to_owned()),
        r.http_status
            .map_or(Valor::Vazio, |s| Valor::Numero(Decimal::from(s))),
        Valor::opt(&r.codigo_erro),
        Valor::opt(&r.message),
        Valor::Booleano(r.cobrado),
        Valor::opt(&r.arquivo),
    ];
    let n = colunas(tipo).len() - comuns.len();
    let extras: Vec<Vec<Valor>> = match (tipo, &r.resposta) {
        (TipoLote::Car, Some(v)) => {
            serde_json::from_value::<CarResponse<CarDadosBasicos>>(v.clone())
                .ok()
                .map(|c| vec![car(&c.dados, &c)])
                .unwrap_or_default()
        }
        (TipoLote::Completo, Some(v)) => {
            serde_json::from_value::<CarResponse<CarDadosCompletos>>(v.clone())
                .ok()
                .map(|c| {
                    let mut l = car(&c.dados.basicos, &c);
                    l.push(Valor::opt(&c.dados.proprietarios_nomes));
                    l.push(Valor::opt(&c.dados.proprietarios_cpfs));
                    vec![l]
                })
                .unwrap_or_default()
        }
        (TipoLote::Proprietario, Some(v)) => {
            serde_json::from_value::<ProprietarioResponse>(v.clone())
                .ok()
                .map(|p| proprietario(&p))
                .unwrap_or_default()
        }
        _ => vec![],
    };
    let extras = if extras.is_empty() {
        vec![vec![Valor::Vazio; n]]
    } else {
        extras
    };
    extras
        .into_iter()
        .map(|e| comuns.iter().cloned().chain(e).collect())
        .collect()
}

fn car<T>(d: &CarDadosBasicos, r: &CarResponse<T>) -> Vec<Valor> {
    let brasilia = |t: chrono::DateTime<chrono::FixedOffset>| {
        Valor::DataHora(t.with_timezone(&Sao_Paulo).naive_local())
    };
    vec![
        Valor::Texto(d.codigo_car.clone()),
        Valor::opt(&d.nome_imovel),
        Valor::num(d.area_total()),
        Valor::num(d.modulos()),
        d.data_cadastro_em().map_or(Valor::Vazio, Valor::DataHora),
        Valor::opt(&d.tipo_imovel),
        Valor::opt(&d.municipio),
        Valor::opt(&d.uf),
        Valor::opt(&d.matricula_numero),
        data_ou_texto(d.matricula_data.as_deref()),
        Valor::opt(&d.matricula_cartorio),
        Valor::opt(&d.codigo_protocolo),
        Valor::num(d.latitude_graus()),
        Valor::num(d.longitude_graus()),
        Valor::opt(&d.latitude),
        Valor::opt(&d.longitude),
        brasilia(r.data_consulta),
        r.data_expiracao.map_or(Valor::Vazio, brasilia),
        Valor::Booleano(r.cache),
        Valor::Booleano(r.sandbox),
    ]
}

/// A registry date (`dd/mm/aaaa`, or with the time as `dataCadastro` has it) as a date; text
/// when it is neither, nothing when absent.
fn data_ou_texto(s: Option<&str>) -> Valor {
    let Some(s) = s else { return Valor::Vazio };
    if let Ok(d) = carapi_sdk::domain::br::parse_data(s) {
        return Valor::DataHora(d);
    }
    chrono::NaiveDate::parse_from_str(s.trim(), "%d/%m/%Y")
        .map_or_else(|_| Valor::Texto(s.to_owned()), Valor::Data)
}

fn proprietario(p: &ProprietarioResponse) -> Vec<Vec<Valor>> {
    let area = |s: &Option<String>| {
        Valor::num(
            s.as_deref()
                .and_then(|s| carapi_sdk::domain::br::parse_decimal(s).ok()),
        )
    };
    let total = Valor::Numero(Decimal::from(p.total));
    p.itens
        .iter()
        .map(|i| {
            vec![
                Valor::Texto(i.registro_car.clone()),
                Valor::opt(&i.codigo_protocolo),
                Valor::opt(&i.nome_imovel),
                Valor::opt(&i.matricula_numero),
                Valor::opt(&i.municipio),
                Valor::opt(&i.uf),
                area(&i.area_total_ha),
                Valor::opt(&i.proprietario_consultado),
                total.clone(),
                Valor::Booleano(p.truncado),
            ]
        })
        .collect()
}

/// The decimal degrees `(longitude, latitude)` of a row of `tipo`, when it has them.
pub fn coordenadas(tipo: TipoLote, linha: &[Valor]) -> Option<(Decimal, Decimal)> {
    let cols = colunas(tipo);
    let pos = |n: &str| cols.iter().position(|c| *c == n);
    match (linha.get(pos("longitude")?), linha.get(pos("latitude")?)) {
        (Some(Valor::Numero(lon)), Some(Valor::Numero(lat))) => Some((*lon, *lat)),
        _ => None,
    }
}
