//! A batch as typed columns, one per field, for the CSV, spreadsheet and map outputs
//! ([`super::export`]) and the CSV streamed to stdout: numbers as numbers (areas, fiscal
//! modules, decimal degrees, prices), instants in Brasília time with the offset they had, dates
//! as dates, booleans as booleans.
//!
//! Columns, by their machine names (`-o csv-cru`, `.geojson`; the tables, `-o csv` and `.xlsx`
//! show their Portuguese titles from `carapi_sdk::labels`):
//!
//! - in the files of `--saida`, one row per input line: `linha`, the input's own columns (a
//!   supplier's id beside the code, under the input's header names), then the record's;
//!   `repetida` says a line repeats an earlier line's key (looked up once: the repeat is not
//!   charged again, `cobrado` false and no `preco`); an invalid line has status `invalida` and
//!   its reason in `mensagem`; a valid key not looked up yet, `pendente`;
//! - the record's own: `chave`, `status`, `httpStatus`, `codigoErro`, `mensagem`, `cobrado`,
//!   `preco` (what this key was charged, BRL), `arquivo`; with the archive, `origem` (`api` or
//!   `acervo`) and `compradoEm`;
//! - the API's fields under their contract names (`codigoCar`, `areaTotalHa`, ...), with
//!   `latitude`/`longitude` in decimal degrees (negative south/west, from the SDK's DMS
//!   accessors) and the registry's DMS text in `latitudeDms`/`longitudeDms`.
//!
//! A `proprietario` record gives one row per CAR of the document (at least one row per key).

use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse, ProprietarioResponse};
use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;

use super::input::{InputLine, LineKind};
use super::kind::BatchKind;
use super::record::{BatchStatus, Record};
use crate::format::{from_brasilia, in_brasilia};

/// One typed cell.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ColumnValue {
    /// No value.
    Empty,
    /// Text.
    Text(String),
    /// A number (hectares, fiscal modules, degrees, counts, BRL).
    Number(Decimal),
    /// An instant in Brasília time, with the offset it had.
    DateTime(DateTime<FixedOffset>),
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

    /// The cell in the analyst's CSV (`-o csv`, `.csv`): decimal comma, `dd/mm/aaaa hh:mm:ss`
    /// in Brasília time, `sim`/`não`.
    pub(crate) fn spreadsheet(&self) -> String {
        match self {
            ColumnValue::Empty => String::new(),
            ColumnValue::Text(s) => s.clone(),
            ColumnValue::Number(n) => {
                let n = n.normalize();
                carapi_sdk::domain::br::format_decimal(n, n.scale())
            }
            ColumnValue::DateTime(d) => d.format("%d/%m/%Y %H:%M:%S").to_string(),
            ColumnValue::Date(d) => d.format("%d/%m/%Y").to_string(),
            ColumnValue::Bool(b) => if *b { "sim" } else { "não" }.to_owned(),
        }
    }

    /// The cell in the machine's CSV (`-o csv-cru`) and the map: decimal point, ISO 8601 (RFC
    /// 3339 with the offset), `true`/`false`.
    pub(crate) fn raw(&self) -> String {
        match self {
            ColumnValue::Empty => String::new(),
            ColumnValue::Text(s) => s.clone(),
            ColumnValue::Number(n) => n.normalize().to_string(),
            ColumnValue::DateTime(d) => d.to_rfc3339(),
            ColumnValue::Date(d) => d.format("%Y-%m-%d").to_string(),
            ColumnValue::Bool(b) => b.to_string(),
        }
    }
}

/// The record's own columns.
const COMMON: [&str; 8] = [
    "chave",
    "status",
    "httpStatus",
    "codigoErro",
    "mensagem",
    "cobrado",
    "preco",
    "arquivo",
];

/// Where each answer came from, with the archive configured.
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

/// The status of a valid key with no record yet.
const PENDING: &str = "pendente";
/// The status of an input line that holds no key.
const INVALID: &str = "invalida";

/// The columns of a batch's rows.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    kind: BatchKind,
    origin: bool,
    /// The files' rows (one per input line): the names of the input's own columns; `None` for
    /// the rows of the records streamed to stdout.
    input_columns: Option<Vec<String>>,
}

impl Layout {
    /// The rows of records as they arrive (stdout): one per record; `origin`: with the
    /// archive's columns.
    pub(crate) fn records(kind: BatchKind, origin: bool) -> Self {
        Layout {
            kind,
            origin,
            input_columns: None,
        }
    }

    /// The rows of the files of `--saida`: one per input line, with the input's own columns
    /// (`input_columns`, their names).
    pub(crate) fn lines(kind: BatchKind, origin: bool, input_columns: Vec<String>) -> Self {
        Layout {
            kind,
            origin,
            input_columns: Some(input_columns),
        }
    }

    /// The machine names of the columns, in order (`-o csv-cru`, `.geojson`). An input column
    /// named as one of the batch's is prefixed `entrada_`.
    pub(crate) fn names(&self) -> Vec<String> {
        let own = self.own_names();
        let mut c = vec![];
        if let Some(input) = &self.input_columns {
            c.push("linha".to_owned());
            for n in input {
                if own.contains(&n.as_str()) || n == "linha" {
                    c.push(format!("entrada_{n}"));
                } else {
                    c.push(n.clone());
                }
            }
        }
        c.extend(own.iter().map(|s| (*s).to_owned()));
        c
    }

    /// The Portuguese titles of the columns, in order (tables, `-o csv`, `.xlsx`): the SDK's
    /// title map; an input column keeps its own name.
    pub(crate) fn titles(&self) -> Vec<String> {
        let carried = self.input_columns.as_ref().map_or(0, Vec::len);
        self.names()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if self.input_columns.is_some() && (1..=carried).contains(&i) {
                    self.input_columns
                        .as_ref()
                        .map_or(n.clone(), |c| c[i - 1].clone())
                } else {
                    carapi_sdk::labels::title_or_name(n).to_owned()
                }
            })
            .collect()
    }

    /// The batch's own column names (without the input's): the record's, `repetida` in the
    /// files, the archive's, the answer's.
    fn own_names(&self) -> Vec<&'static str> {
        let mut c = COMMON.to_vec();
        if self.input_columns.is_some() {
            c.insert(2, "repetida");
        }
        if self.origin {
            c.extend(ORIGIN);
        }
        match self.kind {
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

    /// The rows of one record as it arrives (a [`Layout::records`] layout).
    pub(crate) fn record_rows(&self, r: &Record) -> Vec<Vec<ColumnValue>> {
        self.rows(own(r, None, self.origin), r)
    }

    /// The rows of one input line (a [`Layout::lines`] layout) with its key's record, if any.
    pub(crate) fn line_rows(&self, line: &InputLine, r: Option<&Record>) -> Vec<Vec<ColumnValue>> {
        let mut head = vec![ColumnValue::Number(Decimal::from(line.line))];
        let carried = self.input_columns.as_ref().map_or(0, Vec::len);
        head.extend(
            (0..carried).map(|i| ColumnValue::Text(line.extra.get(i).cloned().unwrap_or_default())),
        );
        let repeat = matches!(line.kind, LineKind::Repeat(_));
        match (&line.kind, r) {
            (LineKind::Invalid(reason), _) => {
                head.extend(without_record(
                    &line.raw,
                    INVALID,
                    reason,
                    false,
                    self.origin,
                ));
                self.rows(head, &Record::new(line.raw.as_str(), BatchStatus::Error))
            }
            (_, None) => {
                let message = "ainda não consultada: rode o mesmo comando para continuar";
                let chave = line.chave().unwrap_or_default();
                head.extend(without_record(chave, PENDING, message, repeat, self.origin));
                self.rows(head, &Record::new(chave, BatchStatus::Error))
            }
            (_, Some(r)) => {
                head.extend(own(r, Some(repeat), self.origin));
                self.rows(head, r)
            }
        }
    }

    /// `head` (the columns before the answer's) followed by the answer's columns of `r`: one row
    /// per CAR of an owner's answer, else one row.
    fn rows(&self, head: Vec<ColumnValue>, r: &Record) -> Vec<Vec<ColumnValue>> {
        let n = self.names().len() - head.len();
        let answers = answer_rows(self.kind, r);
        if answers.is_empty() {
            let mut row = head;
            row.extend(std::iter::repeat_n(ColumnValue::Empty, n));
            return vec![row];
        }
        answers
            .into_iter()
            .map(|a| head.iter().cloned().chain(a).collect())
            .collect()
    }

    /// The decimal degrees `(longitude, latitude)` of a row, when it has them.
    pub(crate) fn coordinates(&self, row: &[ColumnValue]) -> Option<(Decimal, Decimal)> {
        let cols = self.names();
        let pos = |n: &str| cols.iter().position(|c| c == n);
        match (row.get(pos("longitude")?), row.get(pos("latitude")?)) {
            (Some(ColumnValue::Number(lon)), Some(ColumnValue::Number(lat))) => Some((*lon, *lat)),
            _ => None,
        }
    }
}

/// The record's own columns (`repeat`: the files' `repetida`, `None` for the stdout rows).
fn own(r: &Record, repeat: Option<bool>, origin: bool) -> Vec<ColumnValue> {
    let charged = r.cobrado && repeat != Some(true);
    let mut c = vec![
        ColumnValue::Text(r.chave.clone()),
        ColumnValue::Text(r.status.as_str().to_owned()),
    ];
    if let Some(rep) = repeat {
        c.push(ColumnValue::Bool(rep));
    }
    c.extend([
        r.http_status.map_or(ColumnValue::Empty, |s| {
            ColumnValue::Number(Decimal::from(s))
        }),
        ColumnValue::opt(&r.error_code),
        ColumnValue::opt(&r.message),
        ColumnValue::Bool(charged),
        ColumnValue::num(r.preco.filter(|_| charged)),
        ColumnValue::opt(&r.file),
    ]);
    if origin {
        c.push(ColumnValue::opt(&r.origin));
        c.push(r.bought_at.map_or(ColumnValue::Empty, |t| {
            ColumnValue::DateTime(in_brasilia(t))
        }));
    }
    c
}

/// The own columns of a line without a record (invalid, or not looked up yet).
fn without_record(
    chave: &str,
    status: &str,
    message: &str,
    repeat: bool,
    origin: bool,
) -> Vec<ColumnValue> {
    let mut c = vec![
        ColumnValue::Text(chave.to_owned()),
        ColumnValue::Text(status.to_owned()),
        ColumnValue::Bool(repeat),
        ColumnValue::Empty,
        ColumnValue::Empty,
        ColumnValue::Text(message.to_owned()),
        ColumnValue::Bool(false),
        ColumnValue::Empty,
        ColumnValue::Empty,
    ];
    if origin {
        c.extend([ColumnValue::Empty, ColumnValue::Empty]);
    }
    c
}

/// The answer's columns of `r`: one row per CAR of an owner's answer, one for a CAR, none when
/// there is no answer (or it cannot be read).
fn answer_rows(kind: BatchKind, r: &Record) -> Vec<Vec<ColumnValue>> {
    let Some(v) = &r.response else {
        return vec![];
    };
    match kind {
        BatchKind::Car => serde_json::from_value::<CarResponse<CarDadosBasicos>>(v.clone())
            .ok()
            .map(|c| vec![car(&c.dados, &c)])
            .unwrap_or_default(),
        BatchKind::Completo => serde_json::from_value::<CarResponse<CarDadosCompletos>>(v.clone())
            .ok()
            .map(|c| {
                let mut l = car(&c.dados.basicos, &c);
                l.push(ColumnValue::opt(&c.dados.proprietarios_nomes));
                l.push(ColumnValue::opt(&c.dados.proprietarios_cpfs));
                vec![l]
            })
            .unwrap_or_default(),
        BatchKind::Proprietario => serde_json::from_value::<ProprietarioResponse>(v.clone())
            .ok()
            .map(|p| proprietario(&p))
            .unwrap_or_default(),
        BatchKind::Recibo => vec![],
    }
}

fn car<T>(d: &CarDadosBasicos, r: &CarResponse<T>) -> Vec<ColumnValue> {
    let instant = |t: DateTime<FixedOffset>| ColumnValue::DateTime(in_brasilia(t));
    vec![
        ColumnValue::Text(d.codigo_car.clone()),
        ColumnValue::opt(&d.nome_imovel),
        ColumnValue::num(d.area_total()),
        ColumnValue::num(d.modulos()),
        d.data_cadastro_datetime().map_or(ColumnValue::Empty, |t| {
            ColumnValue::DateTime(from_brasilia(t))
        }),
        ColumnValue::opt(&d.tipo_imovel),
        ColumnValue::opt(&d.municipio),
        ColumnValue::opt(&d.uf),
        ColumnValue::opt(&d.matricula_numero),
        date_or_text(d.matricula_data.as_deref()),
        ColumnValue::opt(&d.matricula_cartorio),
        ColumnValue::opt(&d.codigo_protocolo),
        ColumnValue::num(d.latitude_degrees()),
        ColumnValue::num(d.longitude_degrees()),
        ColumnValue::opt(&d.latitude),
        ColumnValue::opt(&d.longitude),
        instant(r.data_consulta),
        r.data_expiracao.map_or(ColumnValue::Empty, instant),
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
        return ColumnValue::DateTime(from_brasilia(d));
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
