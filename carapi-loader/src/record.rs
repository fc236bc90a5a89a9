//! One record of a SQLite load in a compact binary form: what the external sort
//! ([`super::sort`]) spills and merges and what the writers bind, with no allocation per
//! value or per record.
//!
//! A [`Package`] holds many records back to back in one buffer. One record is:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | position read (`seq`, u64 LE): a tie between two versions goes to the later one |
//! | 12 | `data_atualizacao`: seconds (i64 LE) and nanoseconds (u32 LE) of its wall time; `i64::MIN` and 0 when missing |
//! | 12 | `data_cadastro`, the same |
//! | … | the 19 columns of [`super::sqlite::COLUMNS`], each a [`FieldValue`] |
//! | 1 | number of owners, then each owner's document and name as length-prefixed text |
//!
//! A value is a tag byte (0 NULL, 1 text, 2 integer) then, for text, a u32 LE length and the
//! UTF-8 bytes, for an integer its i64 LE. The first column is the CAR code, so the sort key
//! (code, `seq`) sits at a fixed place.
//!
//! The columns are in the encoding the store reads back (`store/sqlite/linhas.rs`): decimals as
//! text with a dot (`Decimal`'s `Display`), date-times as `YYYY-MM-DD HH:MM:SS` (Brasília wall
//! time), booleans and the IBGE code as integers.

use std::cmp::Ordering;
use std::io::Write as _;

use chrono::{Datelike, NaiveDateTime, Timelike};
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::LoadError;
use carapi_service::dados::Imovel;

/// Columns per record (the length of [`super::sqlite::COLUMNS`]).
pub(super) const FIELDS: usize = 19;

const NULL: u8 = 0;
const TEXT: u8 = 1;
const INTEGER: u8 = 2;

/// Bytes before the first column: `seq` and the two instants.
const HEADER: usize = 32;

/// Where the code's text starts: header, tag (1), length (4).
const CODE_START: usize = HEADER + 5;

/// Records encoded back to back, in the order pushed.
#[derive(Debug, Default)]
pub(super) struct Package {
    bytes: Vec<u8>,
    /// Start of each record in `bytes`; a record ends where the next starts.
    starts: Vec<u32>,
    /// Versions that lost to another version of their code (set by the merge).
    pub(crate) lost: u64,
}

impl Package {
    /// An empty batch with room for about `registros` records.
    pub(crate) fn with_capacity(records: usize) -> Self {
        Package {
            bytes: Vec::with_capacity(records * 448),
            starts: Vec::with_capacity(records),
            lost: 0,
        }
    }

    /// Records in the batch.
    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Bytes of the records.
    pub(crate) fn size(&self) -> usize {
        self.bytes.len()
    }

    /// Encodes `imovel`, read at position `seq`.
    ///
    /// # Errors
    /// [`LoadError::Interrupted`] when the record does not fit the format (a text over
    /// 4 GiB, more than 255 owners, a batch over 4 GiB).
    pub(crate) fn push(&mut self, seq: u64, imovel: &Imovel) -> Result<(), LoadError> {
        let start = self.bytes.len();
        let r = encode(&mut self.bytes, seq, imovel).and_then(|()| {
            u32::try_from(self.bytes.len())
                .map(drop)
                .map_err(|_| LoadError::Interrupted("lote grande demais".into()))
        });
        match r {
            Ok(()) => self.starts.push(start as u32),
            Err(_) => self.bytes.truncate(start),
        }
        r
    }

    /// Appends an already encoded record.
    pub(crate) fn push_raw(&mut self, record: &[u8]) {
        self.starts.push(self.bytes.len() as u32);
        self.bytes.extend_from_slice(record);
    }

    /// Record `i` as bytes.
    pub(crate) fn raw(&self, i: usize) -> &[u8] {
        let start = self.starts[i] as usize;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.bytes.len(), |f| *f as usize);
        &self.bytes[start..end]
    }

    /// The records, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Record<'_>> {
        (0..self.len()).map(|i| Record(self.raw(i)))
    }

    /// Empties the batch, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.starts.clear();
        self.lost = 0;
    }
}

fn text(buf: &mut Vec<u8>, t: &[u8]) -> Result<(), LoadError> {
    let n =
        u32::try_from(t.len()).map_err(|_| LoadError::Interrupted("texto grande demais".into()))?;
    buf.push(TEXT);
    buf.extend_from_slice(&n.to_le_bytes());
    buf.extend_from_slice(t);
    Ok(())
}

fn optional(buf: &mut Vec<u8>, t: Option<&String>) -> Result<(), LoadError> {
    match t {
        Some(t) => text(buf, t.as_bytes()),
        None => {
            buf.push(NULL);
            Ok(())
        }
    }
}

fn integer(buf: &mut Vec<u8>, n: i64) {
    buf.push(INTEGER);
    buf.extend_from_slice(&n.to_le_bytes());
}

/// A text value written in place by `escrever` (its length patched afterwards).
fn text_with(buf: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    buf.push(TEXT);
    let place = buf.len();
    buf.extend_from_slice(&[0; 4]);
    write(buf);
    let n = (buf.len() - place - 4) as u32;
    buf[place..place + 4].copy_from_slice(&n.to_le_bytes());
}

fn decimal(buf: &mut Vec<u8>, d: Option<rust_decimal::Decimal>) {
    match d {
        Some(d) => text_with(buf, |b| decimal_text(b, d)),
        None => buf.push(NULL),
    }
}

/// `d` as its `Display` writes it (digits, a dot before the last `scale` of them, a `-` for a
/// negative), without the 96-bit division per digit of the general case.
fn decimal_text(buf: &mut Vec<u8>, d: rust_decimal::Decimal) {
    let scale = d.scale() as usize;
    let Ok(mut x) = u64::try_from(d.mantissa().unsigned_abs()) else {
        // Writing into a Vec cannot fail.
        return drop(write!(buf, "{d}"));
    };
    if x == 0 {
        return drop(write!(buf, "{d}"));
    }
    let mut digits = [b'0'; 48];
    let mut n = 0;
    while x > 0 {
        digits[n] = b'0' + (x % 10) as u8;
        x /= 10;
        n += 1;
    }
    // At least one digit before the dot, and `escala` after it.
    let n = n.max(scale + 1);
    if d.is_sign_negative() {
        buf.push(b'-');
    }
    for i in (0..n).rev() {
        if i + 1 == scale {
            buf.push(b'.');
        }
        buf.push(digits[i]);
    }
}

/// `YYYY-MM-DD HH:MM:SS`, as chrono's `%Y-%m-%d %H:%M:%S` writes it (the store's encoding).
fn date_time(buf: &mut Vec<u8>, d: NaiveDateTime) {
    text_with(buf, |b| {
        let year = d.year();
        if (0..=9999).contains(&year) {
            let two = |b: &mut Vec<u8>, n: u32| {
                b.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8])
            };
            two(b, year as u32 / 100);
            two(b, year as u32 % 100);
            b.push(b'-');
            two(b, d.month());
            b.push(b'-');
            two(b, d.day());
            b.push(b' ');
            two(b, d.hour());
            b.push(b':');
            two(b, d.minute());
            b.push(b':');
            two(b, d.second());
        } else {
            drop(write!(b, "{}", d.format("%Y-%m-%d %H:%M:%S")));
        }
    });
}

/// A wall time as seconds and nanoseconds, in the order of [`NaiveDateTime`] (a missing one
/// first).
fn instant(buf: &mut Vec<u8>, d: Option<NaiveDateTime>) {
    let (s, ns) = d.map_or((i64::MIN, 0), |d| {
        let u = d.and_utc();
        (u.timestamp(), u.timestamp_subsec_nanos())
    });
    buf.extend_from_slice(&s.to_le_bytes());
    buf.extend_from_slice(&ns.to_le_bytes());
}

fn encode(buf: &mut Vec<u8>, seq: u64, i: &Imovel) -> Result<(), LoadError> {
    buf.extend_from_slice(&seq.to_le_bytes());
    instant(buf, i.data_atualizacao);
    instant(buf, Some(i.data_cadastro));
    text(buf, i.codigo_car.as_str().as_bytes())?;
    text(buf, i.status_imovel.as_str().as_bytes())?;
    optional(buf, i.condicao.as_ref())?;
    optional(buf, i.nome_imovel.as_ref())?;
    decimal(buf, Some(i.area_total_ha));
    decimal(buf, i.modulos_fiscais);
    date_time(buf, i.data_cadastro);
    match i.data_atualizacao {
        Some(d) => date_time(buf, d),
        None => buf.push(NULL),
    }
    text(buf, i.tipo_imovel.as_str().as_bytes())?;
    text(buf, i.municipio.as_bytes())?;
    integer(buf, i64::from(i.codigo_municipio_ibge));
    text(buf, i.uf.as_str().as_bytes())?;
    optional(buf, i.codigo_protocolo.as_ref())?;
    decimal(buf, i.latitude);
    decimal(buf, i.longitude);
    optional(buf, i.matricula_numero.as_ref())?;
    optional(buf, i.matricula_data.as_ref())?;
    optional(buf, i.matricula_cartorio.as_ref())?;
    integer(buf, i64::from(i.has_recibo));
    let owners = u8::try_from(i.proprietarios.len())
        .map_err(|_| LoadError::Interrupted(format!("{}: proprietários demais", i.codigo_car)))?;
    buf.push(owners);
    for p in &i.proprietarios {
        text(buf, p.documento.as_str().as_bytes())?;
        text(buf, p.nome.as_bytes())?;
    }
    Ok(())
}

/// One value of a record, borrowed from its batch; binds to SQLite as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldValue<'a> {
    /// SQL NULL.
    Null,
    /// UTF-8 text (it came from a `String`).
    Text(&'a [u8]),
    /// An integer.
    Integer(i64),
}

impl rusqlite::ToSql for FieldValue<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            FieldValue::Null => ValueRef::Null,
            FieldValue::Text(t) => ValueRef::Text(t),
            FieldValue::Integer(n) => ValueRef::Integer(n),
        }))
    }
}

/// One encoded record (see the module docs), borrowed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Record<'a>(pub &'a [u8]);

fn u32_at(b: &[u8], at: usize) -> usize {
    let mut x = [0; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x) as usize
}

fn i64_at(b: &[u8], at: usize) -> i64 {
    let mut x = [0; 8];
    x.copy_from_slice(&b[at..at + 8]);
    i64::from_le_bytes(x)
}

impl<'a> Record<'a> {
    /// The position the record was read at.
    pub(crate) fn seq(&self) -> u64 {
        i64_at(self.0, 0) as u64
    }

    /// The version: (`data_atualizacao`, `data_cadastro`) as (seconds, nanoseconds), a missing
    /// update the oldest.
    pub(crate) fn version(&self) -> ((i64, u32), (i64, u32)) {
        (
            (i64_at(self.0, 8), u32_at(self.0, 16) as u32),
            (i64_at(self.0, 20), u32_at(self.0, 28) as u32),
        )
    }

    /// The CAR code.
    pub(crate) fn codigo(&self) -> &'a [u8] {
        let n = u32_at(self.0, CODE_START - 4);
        &self.0[CODE_START..CODE_START + n]
    }

    /// The sort order of records: by code, then by position read.
    pub(crate) fn compare(&self, other: &Record<'_>) -> Ordering {
        self.codigo()
            .cmp(other.codigo())
            .then_with(|| self.seq().cmp(&other.seq()))
    }

    /// Whether `self`, read after `anterior` with the same code, replaces it: not older by
    /// version (the rule of [`super::wfs::newest`]).
    pub(crate) fn wins(&self, previous: &Record<'_>) -> bool {
        self.version() >= previous.version()
    }

    /// The 19 column values, then the owners.
    pub(crate) fn read(&self) -> Reading<'a> {
        Reading {
            b: self.0,
            at: HEADER,
        }
    }
}

/// Reads the values of a [`Record`] in order.
#[derive(Debug)]
pub(super) struct Reading<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reading<'a> {
    /// The next column value.
    pub(crate) fn valor(&mut self) -> FieldValue<'a> {
        let tag = self.b[self.at];
        self.at += 1;
        match tag {
            TEXT => FieldValue::Text(self.text()),
            INTEGER => {
                let n = i64_at(self.b, self.at);
                self.at += 8;
                FieldValue::Integer(n)
            }
            _ => FieldValue::Null,
        }
    }

    fn text(&mut self) -> &'a [u8] {
        let n = u32_at(self.b, self.at);
        let t = &self.b[self.at + 4..self.at + 4 + n];
        self.at += 4 + n;
        t
    }

    /// The owners' (document, name), in order; call after the [`FIELDS`] values.
    pub(crate) fn owners(mut self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> {
        let n = self.b[self.at];
        self.at += 1;
        (0..n).map(move |_| {
            self.at += 1;
            let doc = self.text();
            self.at += 1;
            (doc, self.text())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::synthetic;

    #[test]
    fn a_record_reads_back_as_the_store_encodes_it() {
        let imoveis = synthetic(200, 5);
        let mut p = Package::default();
        for (n, i) in imoveis.iter().enumerate() {
            p.push(n as u64 * 3, i).unwrap();
        }
        for ((n, i), r) in imoveis.iter().enumerate().zip(p.iter()) {
            assert_eq!(r.seq(), n as u64 * 3);
            assert_eq!(r.codigo(), i.codigo_car.as_str().as_bytes());
            let mut l = r.read();
            let values: Vec<FieldValue<'_>> = (0..FIELDS).map(|_| l.valor()).collect();
            let text = |v: &FieldValue<'_>| match v {
                FieldValue::Text(t) => String::from_utf8(t.to_vec()).unwrap(),
                other => panic!("{other:?}"),
            };
            assert_eq!(text(&values[4]), i.area_total_ha.to_string());
            assert_eq!(
                text(&values[6]),
                i.data_cadastro.format("%Y-%m-%d %H:%M:%S").to_string()
            );
            match i.data_atualizacao {
                Some(d) => assert_eq!(text(&values[7]), d.format("%Y-%m-%d %H:%M:%S").to_string()),
                None => assert_eq!(values[7], FieldValue::Null),
            }
            assert_eq!(
                values[10],
                FieldValue::Integer(i64::from(i.codigo_municipio_ibge))
            );
            assert_eq!(values[18], FieldValue::Integer(i64::from(i.has_recibo)));
            let owners: Vec<(String, String)> = l
                .owners()
                .map(|(d, n)| {
                    (
                        String::from_utf8(d.to_vec()).unwrap(),
                        String::from_utf8(n.to_vec()).unwrap(),
                    )
                })
                .collect();
            let wanted: Vec<(String, String)> = i
                .proprietarios
                .iter()
                .map(|p| (p.documento.as_str().to_owned(), p.nome.clone()))
                .collect();
            assert_eq!(owners, wanted);
        }
    }

    #[test]
    fn decimals_are_written_as_display_writes_them() {
        use rust_decimal::Decimal;
        let mut cases = vec![
            Decimal::ZERO,
            Decimal::new(0, 4),
            Decimal::new(5, 4),
            Decimal::new(-5, 4),
            Decimal::new(12_345, 0),
            Decimal::new(-123_456_789, 2),
            Decimal::new(i64::MAX, 28),
            Decimal::MAX,
            Decimal::MIN,
            Decimal::from_i128_with_scale(u64::MAX as i128 + 1, 3),
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        for scale in 0..=28 {
            for _ in 0..50 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let m = (x >> (scale % 64)) as i64;
                cases.push(Decimal::new(
                    if x.is_multiple_of(3) { -m } else { m },
                    scale,
                ));
            }
        }
        for d in cases {
            let mut b = Vec::new();
            decimal_text(&mut b, d);
            assert_eq!(String::from_utf8(b).unwrap(), d.to_string(), "{d:?}");
        }
    }

    #[test]
    fn dates_outside_four_digit_years_are_written_as_chrono_writes_them() {
        let d = chrono::NaiveDate::from_ymd_opt(12_345, 1, 2)
            .unwrap()
            .and_hms_opt(3, 4, 5)
            .unwrap();
        let mut b = Vec::new();
        date_time(&mut b, d);
        assert_eq!(
            &b[5..],
            d.format("%Y-%m-%d %H:%M:%S").to_string().as_bytes()
        );
    }

    #[test]
    fn a_missing_update_is_older_than_any_and_ties_go_to_the_later_one() {
        let mut i = synthetic(1, 1).remove(0);
        i.data_atualizacao = None;
        let mut p = Package::default();
        p.push(0, &i).unwrap();
        i.data_atualizacao = Some(i.data_cadastro);
        p.push(1, &i).unwrap();
        p.push(2, &i).unwrap();
        // A millisecond newer wins, as `wfs::newest` has it, though the stored text has
        // whole seconds.
        i.data_atualizacao = i
            .data_atualizacao
            .map(|d| d + chrono::TimeDelta::milliseconds(1));
        p.push(3, &i).unwrap();
        let r: Vec<Record<'_>> = p.iter().collect();
        assert!(r[1].wins(&r[0]) && !r[0].wins(&r[1]));
        assert!(r[2].wins(&r[1]), "a tie goes to the one read later");
        assert!(r[3].wins(&r[2]) && !r[2].wins(&r[3]));
        assert_eq!(r[0].compare(&r[1]), Ordering::Less);
    }
}
