//! Import of CAR records in the public SICAR CSV columns (docs/dominio.md "Public SICAR record
//! fields"; the files in `carapi-loader/data/sicar/` are examples):
//!
//! `FID,cod_imovel,status_imovel,dat_criacao,data_atualizacao,area,condicao,uf,municipio,cod_municipio_ibge,m_fiscal,tipo_imovel`
//!
//! `FID` is optional and ignored; extra columns are ignored. Each row is checked and completed
//! exactly as the bundled records are (synthetic owners, matrícula, protocol, centroid), so
//! importing the same file twice gives the same records.

use std::borrow::Cow;
use std::io::Read;
use std::str::FromStr;
use std::sync::LazyLock;

use carapi_sdk::CodigoCar;
use carapi_sdk::domain::br;
use chrono::NaiveDateTime;
use chrono_tz::America::Sao_Paulo;
use rust_decimal::Decimal;

pub use crate::complete::SicarRecord;
use crate::complete::complete;
use crate::csv_lines::LineCounter;
use carapi_service::dados::{Imovel, StatusImovel, TipoImovel, Uf};

use crate::municipios;

/// The columns an import file must have (any order; others are ignored).
pub(crate) const COLUMNS: [&str; 11] = [
    "cod_imovel",
    "status_imovel",
    "dat_criacao",
    "data_atualizacao",
    "area",
    "condicao",
    "uf",
    "municipio",
    "cod_municipio_ibge",
    "m_fiscal",
    "tipo_imovel",
];

/// Why an import file was refused. Nothing is imported when any row is bad.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The header lacks required columns (see `COLUMNS`).
    #[error("cabeçalho sem as colunas obrigatórias: {}", missing.join(", "))]
    Header {
        /// The missing column names.
        missing: Vec<&'static str>,
    },
    /// The file is not readable CSV at this line (I/O error, bad UTF-8, wrong field count).
    #[error("linha {line}: CSV ilegível: {source}")]
    Csv {
        /// 1-based line number in the file (the header is line 1).
        line: u64,
        /// The parser's error.
        #[source]
        source: csv::Error,
    },
    /// A field holds a value the registry does not allow.
    #[error("linha {line}: campo {field} inválido ({valor:?}): {why}")]
    Field {
        /// 1-based line number in the file (the header is line 1).
        line: u64,
        /// Column name.
        field: &'static str,
        /// The value as found.
        valor: String,
        /// What is expected, in Portuguese.
        why: String,
    },
}

/// Completes a validated row into a record (owners, matrícula, protocol, municipality
/// centroid), as [`parse_csv`] does.
pub(crate) fn complete_record(r: SicarRecord) -> Imovel {
    complete(r)
}

/// One row in the public SICAR columns, as text (CSV fields, or WFS properties written out),
/// borrowed where it can be. An absent optional value is the empty string.
#[derive(Debug, Default)]
pub(crate) struct CsvRow<'a> {
    pub(crate) cod_imovel: Cow<'a, str>,
    pub(crate) status_imovel: Cow<'a, str>,
    pub(crate) dat_criacao: Cow<'a, str>,
    pub(crate) data_atualizacao: Cow<'a, str>,
    pub(crate) area: Cow<'a, str>,
    pub(crate) condicao: Cow<'a, str>,
    pub(crate) uf: Cow<'a, str>,
    pub(crate) municipio: Cow<'a, str>,
    pub(crate) cod_municipio_ibge: Cow<'a, str>,
    pub(crate) m_fiscal: Cow<'a, str>,
    pub(crate) tipo_imovel: Cow<'a, str>,
}

/// Parses a SICAR CSV (UTF-8, comma-separated, header row, optional byte-order mark) into
/// completed records, in file order. Holds the whole file's records: for big files, stream
/// with `CsvReader` instead.
///
/// Rules per row: `cod_imovel` a valid CAR code (not a sandbox code); `status_imovel` one of
/// `AT`, `PE`, `SU`, `CA`; `dat_criacao` required and `data_atualizacao` optional, ISO
/// (`2014-05-09T17:16:10.119`, Brasília time; with `Z` or an offset it is converted to
/// Brasília time) or `dd/MM/yyyy HH:mm:ss`; `area` (hectares) and optional
/// `m_fiscal` non-negative decimals with a dot or a comma; `uf` a known UF agreeing with the
/// first two digits of `cod_municipio_ibge`, itself a real IBGE municipality; `tipo_imovel` one
/// of `IRU`, `AST`, `PCT`; an empty `municipio` takes the IBGE name.
///
/// # Errors
/// [`ImportError`] naming the line and the field of the first bad row.
pub fn parse_csv(input: impl Read) -> Result<Vec<Imovel>, ImportError> {
    CsvReader::new(input)?
        .map(|r| r.map(|(_, record)| complete(record)))
        .collect()
}

/// Writes `imoveis` as a public SICAR CSV: a header with the columns of `COLUMNS`, then one
/// row per record, dates in ISO form, decimals with a dot: what [`parse_csv`] reads back into
/// the same public fields (the completed ones are drawn again from the CAR code).
///
/// # Errors
/// The writer's.
pub fn write_csv(
    w: impl std::io::Write,
    imoveis: impl IntoIterator<Item = Imovel>,
) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(w);
    w.write_record(COLUMNS)?;
    let data = |d: NaiveDateTime| d.format("%Y-%m-%dT%H:%M:%S").to_string();
    for i in imoveis {
        w.write_record([
            i.codigo_car.to_string(),
            i.status_imovel.to_string(),
            data(i.data_cadastro),
            i.data_atualizacao.map(data).unwrap_or_default(),
            i.area_total_ha.to_string(),
            i.condicao.unwrap_or_default(),
            i.uf.to_string(),
            i.municipio,
            i.codigo_municipio_ibge.to_string(),
            i.modulos_fiscais.map(|d| d.to_string()).unwrap_or_default(),
            i.tipo_imovel.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// A streaming reader of a SICAR CSV: one validated row at a time, with its line number, in
/// constant memory. Same rules as [`parse_csv`]; the rows are not completed yet (owners,
/// matrícula, coordinates: [`CsvReader::completos`]).
#[derive(Debug)]
pub(crate) struct CsvReader<R> {
    reader: csv::Reader<LineCounter<R>>,
    columns: Columns,
    record: csv::StringRecord,
}

/// Where each of [`COLUMNS`] is in a file's rows (the first column of that name).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns([usize; COLUMNS.len()]);

impl Columns {
    /// The positions in `header`, or the required columns it lacks.
    fn de(header: &csv::StringRecord) -> Result<Self, ImportError> {
        let mut positions = [0; COLUMNS.len()];
        let mut missing = Vec::new();
        for (position, name) in positions.iter_mut().zip(COLUMNS) {
            match header.iter().position(|h| h == name) {
                Some(p) => *position = p,
                None => missing.push(name),
            }
        }
        if missing.is_empty() {
            Ok(Columns(positions))
        } else {
            Err(ImportError::Header { missing })
        }
    }

    /// The row's fields as [`CsvRow`] (an absent field is empty).
    fn line_of<'r>(&self, r: &'r csv::StringRecord) -> CsvRow<'r> {
        let c = |i: usize| Cow::Borrowed(r.get(self.0[i]).unwrap_or_default().trim_ascii());
        CsvRow {
            cod_imovel: c(0),
            status_imovel: c(1),
            dat_criacao: c(2),
            data_atualizacao: c(3),
            area: c(4),
            condicao: c(5),
            uf: c(6),
            municipio: c(7),
            cod_municipio_ibge: c(8),
            m_fiscal: c(9),
            tipo_imovel: c(10),
        }
    }
}

impl<R: Read> CsvReader<R> {
    /// Reads and checks the header.
    ///
    /// # Errors
    /// [`ImportError::Header`] when required columns are missing; [`ImportError::Csv`] when
    /// the header cannot be read.
    pub(crate) fn new(input: R) -> Result<Self, ImportError> {
        // Fields are trimmed where they are read (`Columns::line`): the reader's own trim
        // copies every row into a new record.
        let mut reader = csv::ReaderBuilder::new().from_reader(LineCounter::new(input));
        let header: csv::StringRecord = reader
            .headers()
            .map_err(|source| ImportError::Csv { line: 1, source })?
            .iter()
            .map(|h| h.trim_ascii().trim_start_matches('\u{feff}'))
            .collect();
        Ok(CsvReader {
            reader,
            columns: Columns::de(&header)?,
            record: csv::StringRecord::new(),
        })
    }

    /// The rows completed into records (owners, matrícula, protocol, centroid).
    pub(crate) fn completos(self) -> impl Iterator<Item = Result<Imovel, ImportError>> {
        self.map(|r| r.map(|(_, record)| complete(record)))
    }

    /// Where the required columns are (what [`validate_raw`] needs to read a row).
    pub(crate) fn columns(&self) -> Columns {
        self.columns
    }

    /// Reads the next row into `registro` (its buffers reused), not checked yet; returns its
    /// 1-based line, `None` at the end of the file.
    ///
    /// # Errors
    /// [`ImportError::Csv`] when the file is not readable CSV at that line.
    pub(crate) fn read_raw(
        &mut self,
        record: &mut csv::StringRecord,
    ) -> Result<Option<u64>, ImportError> {
        match self.reader.read_record(record) {
            Ok(false) => Ok(None),
            Ok(true) => Ok(Some(self.line_of(record.position()))),
            Err(source) => Err(ImportError::Csv {
                line: self.line_of(source.position()),
                source,
            }),
        }
    }

    /// The physical line of a record read at `posicao` (`csv`'s own count is wrong after CRLF:
    /// see [`LineCounter`]).
    fn line_of(&mut self, position: Option<&csv::Position>) -> u64 {
        position.map_or(0, |p| self.reader.get_mut().line_of(p.byte()))
    }

    fn next_one(&mut self) -> Result<Option<(u64, SicarRecord)>, ImportError> {
        let mut record = std::mem::take(&mut self.record);
        let got_one = self.read_raw(&mut record);
        self.record = record;
        match got_one? {
            None => Ok(None),
            Some(line) => Ok(Some((
                line,
                validate_raw(&self.columns, &self.record, line)?,
            ))),
        }
    }
}

/// Checks one row as read ([`CsvReader::proxima_bruta`]) against the rules of [`parse_csv`];
/// errors carry `linha`.
pub(crate) fn validate_raw(
    columns: &Columns,
    record: &csv::StringRecord,
    line: u64,
) -> Result<SicarRecord, ImportError> {
    validate(columns.line_of(record), line)
}

impl ImportError {
    /// The line (CSV) or feature index (WFS) the error names, when it names one.
    pub(crate) fn line_of(&self) -> Option<u64> {
        match self {
            ImportError::Header { .. } => None,
            ImportError::Csv { line, .. } | ImportError::Field { line, .. } => Some(*line),
        }
    }
}

impl<R: Read> Iterator for CsvReader<R> {
    /// `(line, row)`: the 1-based line of the row in the file (the header is line 1).
    type Item = Result<(u64, SicarRecord), ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_one().transpose()
    }
}

/// The error of field `campo` holding `valor` at `linha`.
fn field_error(line: u64, field: &'static str, valor: &str, why: &str) -> ImportError {
    ImportError::Field {
        line,
        field,
        valor: valor.to_owned(),
        why: why.to_owned(),
    }
}

/// Checks one row against the rules of [`parse_csv`]; errors carry `linha` (a CSV line, or a
/// WFS feature index).
pub(crate) fn validate(l: CsvRow<'_>, line: u64) -> Result<SicarRecord, ImportError> {
    let error = |field: &'static str, valor: &str, why: &str| field_error(line, field, valor, why);
    let codigo_car = CodigoCar::parse(&l.cod_imovel)
        .ok()
        .filter(|c| !c.is_sandbox())
        .ok_or_else(|| {
            error(
                "cod_imovel",
                &l.cod_imovel,
                "esperado UF-IIIIIII-<32 hexadecimais>",
            )
        })?;
    let status_imovel =
        StatusImovel::parse(&l.status_imovel.to_ascii_uppercase()).ok_or_else(|| {
            error(
                "status_imovel",
                &l.status_imovel,
                "esperado AT, PE, SU ou CA",
            )
        })?;
    let (data_cadastro, data_atualizacao) = dates(&l, line)?;
    let area_total_ha = decimal(&l.area)
        .ok_or_else(|| error("area", &l.area, "esperado número de hectares não negativo"))?;
    let modulos_fiscais = match &*l.m_fiscal {
        "" => None,
        s => Some(decimal(s).ok_or_else(|| error("m_fiscal", s, "esperado número não negativo"))?),
    };
    let (codigo_municipio_ibge, nome_ibge, code) = local(&l, line)?;
    let tipo_imovel = TipoImovel::parse(&l.tipo_imovel.to_ascii_uppercase())
        .ok_or_else(|| error("tipo_imovel", &l.tipo_imovel, "esperado IRU, AST ou PCT"))?;
    let municipio = if l.municipio.is_empty() {
        nome_ibge
    } else {
        l.municipio.into_owned()
    };
    Ok(SicarRecord {
        codigo_car,
        status_imovel,
        condicao: (!l.condicao.is_empty()).then(|| l.condicao.into_owned()),
        data_cadastro,
        data_atualizacao,
        area_total_ha,
        modulos_fiscais,
        tipo_imovel,
        municipio,
        codigo_municipio_ibge,
        uf: code,
    })
}

/// `dat_criacao` and `data_atualizacao` (optional) of a row.
fn dates(l: &CsvRow<'_>, line: u64) -> Result<(NaiveDateTime, Option<NaiveDateTime>), ImportError> {
    const REASON: &str = "esperada data ISO ou dd/MM/yyyy HH:mm:ss";
    let cadastro = data(&l.dat_criacao)
        .ok_or_else(|| field_error(line, "dat_criacao", &l.dat_criacao, REASON))?;
    let update = match &*l.data_atualizacao {
        "" => None,
        s => Some(data(s).ok_or_else(|| field_error(line, "data_atualizacao", s, REASON))?),
    };
    Ok((cadastro, update))
}

/// The IBGE code of the row's municipality, its name in the IBGE list and the row's UF
/// (upper case), which must be the municipality's.
fn local(l: &CsvRow<'_>, line: u64) -> Result<(u32, String, Uf), ImportError> {
    let error = |field: &'static str, valor: &str, why: &str| field_error(line, field, valor, why);
    let codigo: u32 = l.cod_municipio_ibge.parse().map_err(|_| {
        error(
            "cod_municipio_ibge",
            &l.cod_municipio_ibge,
            "esperados 7 dígitos",
        )
    })?;
    let municipio = municipios::by_code(codigo).ok_or_else(|| {
        error(
            "cod_municipio_ibge",
            &l.cod_municipio_ibge,
            "município inexistente na lista do IBGE",
        )
    })?;
    match Uf::parse(&l.uf.to_ascii_uppercase()) {
        Some(uf) if uf.codigo_ibge() == municipio.codigo_uf => {
            Ok((codigo, municipio.nome.clone(), uf))
        }
        Some(_) => Err(error(
            "uf",
            &l.uf,
            "UF diferente da do código IBGE do município",
        )),
        None => Err(error("uf", &l.uf, "esperada sigla de UF (ex.: DF)")),
    }
}

/// ISO date-time with optional fraction (`2014-10-19T02:49:37.37`, `T` or space), taken as
/// Brasília wall time (the public CSV's convention); with `Z` or an offset
/// (`2019-05-14T22:30:08.576Z`, the WFS convention) it is converted to Brasília wall time
/// (America/Sao_Paulo, daylight saving time included); or the registry's `dd/MM/yyyy HH:mm:ss`.
fn data(s: &str) -> Option<NaiveDateTime> {
    if let Some(d) = simple_iso_date(s) {
        return Some(d);
    }
    if let Ok(instant) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(instant.with_timezone(&Sao_Paulo).naive_local());
    }
    ISO_FORMATS
        .iter()
        .find_map(|itens| {
            let mut p = chrono::format::Parsed::new();
            chrono::format::parse(&mut p, s, itens.iter()).ok()?;
            p.to_naive_datetime_with_offset(0).ok()
        })
        .or_else(|| br::parse_data(s).ok())
}

/// `YYYY-MM-DDTHH:MM:SS` (or a space for the `T`) with an optional `.` and 1 to 9 digits, no
/// zone: the public files' common shape, read by hand, to the value chrono's parser gives it
/// (a few times faster). `None` for anything else, which [`data`] hands to chrono.
fn simple_iso_date(s: &str) -> Option<NaiveDateTime> {
    let b = s.as_bytes();
    let form = b.len() >= 19
        && (b[4], b[7], b[13], b[16]) == (b'-', b'-', b':', b':')
        && matches!(b[10], b'T' | b' ');
    if !form {
        return None;
    }
    let n = |r: std::ops::Range<usize>| {
        b[r].iter().try_fold(0u32, |a, c| {
            c.is_ascii_digit().then(|| a * 10 + u32::from(c - b'0'))
        })
    };
    let nanos = match &b[19..] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            n(20..b.len())? * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    chrono::NaiveDate::from_ymd_opt(n(0..4)? as i32, n(5..7)?, n(8..10)?)?.and_hms_nano_opt(
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
        nanos,
    )
}

/// `%Y-%m-%dT%H:%M:%S%.f` and `%Y-%m-%d %H:%M:%S%.f`, parsed once (what
/// `NaiveDateTime::parse_from_str` would parse again for every row).
static ISO_FORMATS: LazyLock<Vec<Vec<chrono::format::Item<'static>>>> = LazyLock::new(|| {
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .into_iter()
        .map(|f| {
            chrono::format::StrftimeItems::new(f)
                .parse_to_owned()
                .expect("formato de data fixo")
        })
        .collect()
});

/// A non-negative decimal written with a dot (`2.0131`) or a decimal comma (`2,0131`).
fn decimal(s: &str) -> Option<Decimal> {
    Decimal::from_str(s)
        .ok()
        .or_else(|| br::parse_decimal(s).ok())
        .filter(|d| !d.is_sign_negative())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "FID,cod_imovel,status_imovel,dat_criacao,data_atualizacao,area,condicao,uf,municipio,cod_municipio_ibge,m_fiscal,tipo_imovel\n";
    const GOOD: &str = "x.1,DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47,AT,2014-05-09T17:16:10.119,2018-11-12T11:49:43.665,2.0131,\"Analisado, aguardando\",DF,Brasília,5300108,0.4026,IRU\n";

    fn error_of(bad_line: &str) -> ImportError {
        let csv = format!("{HEADER}{GOOD}{bad_line}");
        parse_csv(csv.as_bytes()).expect_err(bad_line)
    }

    #[test]
    fn importa_linha_boa_com_bom_e_sem_fid() {
        let csv = format!("\u{feff}{}{}", &HEADER[4..], &GOOD[4..]);
        let v = parse_csv(csv.as_bytes()).expect("válido");
        assert_eq!(v.len(), 1);
        assert_eq!(
            v[0].codigo_car.as_str(),
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
        );
        assert_eq!(v[0].condicao.as_deref(), Some("Analisado, aguardando"));
        assert_eq!(v[0].area_total_ha.to_string(), "2.0131");
        assert_eq!(br::format_data(v[0].data_cadastro), "09/05/2014 17:16:10");
    }

    #[test]
    fn mesma_linha_mesma_complecao() {
        let a = parse_csv(format!("{HEADER}{GOOD}").as_bytes()).expect("válido");
        let b = parse_csv(format!("{HEADER}{GOOD}").as_bytes()).expect("válido");
        assert_eq!(a, b);
    }

    #[test]
    fn erros_dizem_linha_e_campo() {
        let cases = [
            (
                GOOD.replace("DF-5300108-B69B", "DF-5300108-XXXX"),
                "cod_imovel",
            ),
            (GOOD.replace(",AT,", ",XX,"), "status_imovel"),
            (
                GOOD.replace("2014-05-09T17:16:10.119", "ontem"),
                "dat_criacao",
            ),
            (
                GOOD.replace("2018-11-12T11:49:43.665", "2018-13-12T11:49:43"),
                "data_atualizacao",
            ),
            (GOOD.replace(",2.0131,", ",-2,"), "area"),
            (GOOD.replace(",0.4026,", ",abc,"), "m_fiscal"),
            (GOOD.replace(",DF,", ",MT,"), "uf"),
            (GOOD.replace(",5300108,", ",5399999,"), "cod_municipio_ibge"),
            (GOOD.replace(",IRU", ",XYZ"), "tipo_imovel"),
        ];
        for (line, expected) in cases {
            match error_of(&line) {
                ImportError::Field { line: 3, field, .. } => assert_eq!(field, expected),
                other => panic!("{expected}: {other}"),
            }
        }
        let msg = error_of(&GOOD.replace(",IRU", ",XYZ")).to_string();
        assert!(msg.starts_with("linha 3: campo tipo_imovel"), "{msg}");
    }

    #[test]
    fn sandbox_e_recusado() {
        let line = GOOD.replace(
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
            carapi_sdk::sandbox::CAR_BASICO,
        );
        assert!(matches!(
            error_of(&line),
            ImportError::Field {
                field: "cod_imovel",
                ..
            }
        ));
    }

    #[test]
    fn numero_de_campos_errado_e_cabecalho_incompleto() {
        assert!(matches!(
            error_of("a,b,c\n"),
            ImportError::Csv { line: 3, .. }
        ));
        match parse_csv("cod_imovel,area\n".as_bytes()) {
            Err(ImportError::Header { missing }) => {
                assert!(missing.contains(&"status_imovel") && !missing.contains(&"area"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn instante_utc_vira_hora_de_brasilia_com_horario_de_verao() {
        let cases = [
            // The DF bulk-update instant: the CSV shows it as 11:06:51.287 (UTC-3).
            ("2021-08-25T14:06:51.287Z", "25/08/2021 11:06:51"),
            // Daylight saving time until 2019: UTC-2 in January 2018.
            ("2018-01-15T12:00:00Z", "15/01/2018 10:00:00"),
            ("2018-01-15T12:00:00-02:00", "15/01/2018 12:00:00"),
            // Without a zone: already Brasília wall time.
            ("2018-01-15T12:00:00", "15/01/2018 12:00:00"),
        ];
        for (entry, expected) in cases {
            let line = GOOD.replace("2014-05-09T17:16:10.119", entry);
            let v = parse_csv(format!("{HEADER}{line}").as_bytes()).expect(entry);
            assert_eq!(br::format_data(v[0].data_cadastro), expected, "{entry}");
        }
    }

    #[test]
    fn a_forma_iso_simples_da_o_que_o_chrono_da() {
        let chrono = |s: &str| {
            ISO_FORMATS.iter().find_map(|itens| {
                let mut p = chrono::format::Parsed::new();
                chrono::format::parse(&mut p, s, itens.iter()).ok()?;
                p.to_naive_datetime_with_offset(0).ok()
            })
        };
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        let mut cases = vec![
            "2014-05-09T17:16:10.119".to_owned(),
            "2014-05-09 17:16:10".to_owned(),
            "2024-02-29T23:59:59.999999999".to_owned(),
            "2023-02-29T10:00:00".to_owned(),
            "2014-05-09T17:16:60".to_owned(),
            "2014-05-09T24:00:00".to_owned(),
            "2014-05-09T17:16:10.".to_owned(),
            "2014-05-09T17:16:10.1234567891".to_owned(),
            "0000-01-01T00:00:00".to_owned(),
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = |k: u64, m: u64| x.rotate_left(k as u32) % m;
            cases.push(format!(
                "{:04}-{:02}-{:02}{}{:02}:{:02}:{:02}{}",
                d(3, 3000),
                d(7, 14),
                d(11, 33),
                if x.is_multiple_of(2) { 'T' } else { ' ' },
                d(17, 26),
                d(23, 61),
                d(29, 62),
                [".5", ".123", "", ".000000001"][d(31, 4) as usize]
            ));
        }
        for c in &cases {
            if let Some(v) = simple_iso_date(c) {
                assert_eq!(Some(v), chrono(c), "{c}");
            }
        }
        assert!(
            cases
                .iter()
                .filter(|c| simple_iso_date(c).is_some())
                .count()
                > 5_000
        );
    }

    #[test]
    fn aceita_datas_e_numeros_no_padrao_brasileiro() {
        let line = GOOD
            .replace("2014-05-09T17:16:10.119", "09/05/2014 17:16:10")
            .replace(",2.0131,", ",\"2,0131\",");
        let v = parse_csv(format!("{HEADER}{line}").as_bytes()).expect("válido");
        assert_eq!(v[0].area_total_ha.to_string(), "2.0131");
        assert_eq!(br::format_data(v[0].data_cadastro), "09/05/2014 17:16:10");
    }
}
