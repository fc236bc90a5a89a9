//! Formatting for people and for CSV: each cell carries both forms.
//!
//! Tables show money as `R$ 1.234,56` (SDK `domain::brl::format`), timestamps in Brasília time
//! (`America/Sao_Paulo`, `dd/mm/aaaa hh:mm:ss`) and booleans as `sim`/`não`; the machine's CSV
//! (`-o csv-cru`) gets the raw form (`1234.56`, RFC 3339, `true`/`false`) so a script can read it
//! back, the analyst's (`-o csv`) the form Excel in Portuguese reads ([`CellValue::spreadsheet`]).

use carapi_sdk::domain::{br, brl};
use chrono::{DateTime, FixedOffset, NaiveDateTime, Offset, TimeZone};
use chrono_tz::America::Sao_Paulo;
use comfy_table::{Attribute, Cell, ContentArrangement, Table, presets};
use rust_decimal::Decimal;

/// The UTF-8 byte order mark that tells Excel a CSV is UTF-8 (the analyst's CSV starts with it).
pub(crate) const BYTE_ORDER_MARK: &str = "\u{feff}";

/// One value in two forms: for a table (`human`) and for CSV (`raw`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellValue {
    /// Shown in tables.
    pub(crate) human: String,
    /// Written to CSV.
    pub(crate) raw: String,
}

impl CellValue {
    /// Text, the same in both forms.
    pub(crate) fn text(s: impl Into<String>) -> Self {
        let s = s.into();
        CellValue {
            human: s.clone(),
            raw: s,
        }
    }

    /// Optional text: `—` in tables, empty in CSV when absent.
    pub(crate) fn optional(s: Option<&str>) -> Self {
        match s {
            Some(s) => Self::text(s),
            None => CellValue {
                human: "—".into(),
                raw: String::new(),
            },
        }
    }

    /// Money in BRL: `R$ 1.234,56` / `1234.56`.
    pub(crate) fn money(v: Decimal) -> Self {
        CellValue {
            human: brl::format(v),
            raw: format!("{:.2}", brl::centavos(v)),
        }
    }

    /// Optional money; `empty` is what a table shows when absent (e.g. "sem limite").
    pub(crate) fn optional_money(v: Option<Decimal>, empty: &str) -> Self {
        match v {
            Some(v) => Self::money(v),
            None => CellValue {
                human: empty.into(),
                raw: String::new(),
            },
        }
    }

    /// An integer.
    pub(crate) fn integer(v: impl std::fmt::Display) -> Self {
        Self::text(v.to_string())
    }

    /// A percentage given in percent points (`5` -> `5%`, `7.5` -> `7,5%`).
    pub(crate) fn percent(v: Decimal) -> Self {
        CellValue {
            human: format!("{}%", decimal_br(v)),
            raw: v.normalize().to_string(),
        }
    }

    /// A boolean: `sim`/`não` / `true`/`false`.
    pub(crate) fn boolean(v: bool) -> Self {
        CellValue {
            human: if v { "sim" } else { "não" }.into(),
            raw: v.to_string(),
        }
    }

    /// An instant, shown in Brasília time; RFC 3339 in CSV.
    pub(crate) fn instant(v: DateTime<FixedOffset>) -> Self {
        CellValue {
            human: brasilia(v),
            raw: v.to_rfc3339(),
        }
    }

    /// An optional instant.
    pub(crate) fn optional_instant(v: Option<DateTime<FixedOffset>>) -> Self {
        match v {
            Some(v) => Self::instant(v),
            None => CellValue {
                human: "—".into(),
                raw: String::new(),
            },
        }
    }
}

impl CellValue {
    /// A registry value: its text as the registry writes it in tables (`9,8043`, `14/05/2019
    /// 10:00:00`, `15°47'38,51" S`), and `raw`, the machine's form (`9.8043`, ISO 8601,
    /// decimal degrees), in `-o csv-cru`; `—` and empty when absent. `raw` falls back to the
    /// text when the registry's text does not parse.
    pub(crate) fn registry(text: Option<&str>, raw: Option<String>) -> Self {
        match text {
            Some(t) => CellValue {
                human: t.to_owned(),
                raw: raw.unwrap_or_else(|| t.to_owned()),
            },
            None => Self::optional(None),
        }
    }

    /// The value in the analyst's CSV (Excel in Portuguese): a raw decimal with a decimal comma
    /// (`1234,56`, no grouping, so it stays a number), an instant and a boolean as a table shows
    /// them (Brasília time, `sim`/`não`), an ISO date as `dd/mm/aaaa`, anything else raw.
    pub(crate) fn spreadsheet(&self) -> String {
        let b = self.raw.as_str();
        if b == "true" || b == "false" || DateTime::parse_from_rfc3339(b).is_ok() {
            return self.human.clone();
        }
        if let Ok(d) = chrono::NaiveDate::parse_from_str(b, "%Y-%m-%d") {
            return d.format("%d/%m/%Y").to_string();
        }
        let number = b.strip_prefix('-').unwrap_or(b);
        match number.split_once('.') {
            Some((i, d))
                if !i.is_empty()
                    && !d.is_empty()
                    && i.chars().chain(d.chars()).all(|c| c.is_ascii_digit()) =>
            {
                b.replacen('.', ",", 1)
            }
            _ => b.to_owned(),
        }
    }
}

/// `dd/mm/aaaa hh:mm:ss` in Brasília time: America/Sao_Paulo, with the offset the instant had
/// (`-02:00` in the daylight-saving summers up to 2019, `-03:00` since), as every time a
/// person reads is shown.
pub(crate) fn brasilia<Tz: TimeZone>(v: DateTime<Tz>) -> String {
    in_brasilia(v).format("%d/%m/%Y %H:%M:%S").to_string()
}

/// `dd/mm/aaaa hh:mm` in Brasília time (see [`brasilia`]).
pub(crate) fn brasilia_minutes<Tz: TimeZone>(v: DateTime<Tz>) -> String {
    in_brasilia(v).format("%d/%m/%Y %H:%M").to_string()
}

/// An instant as Brasília's clocks showed it, with the offset it had then.
pub(crate) fn in_brasilia<Tz: TimeZone>(v: DateTime<Tz>) -> DateTime<FixedOffset> {
    v.with_timezone(&Sao_Paulo).fixed_offset()
}

/// The instant a Brasília wall-clock time names (what a person types, or the registry's
/// `dd/MM/yyyy HH:mm:ss`), with the offset America/Sao_Paulo had then. Never fails: a time the
/// clocks skipped (the start of daylight saving: midnight did not exist) is read with the
/// offset before the change, and a time they showed twice (its end) as its first occurrence,
/// the earlier offset too.
pub(crate) fn from_brasilia(local: NaiveDateTime) -> DateTime<FixedOffset> {
    if let Some(t) = Sao_Paulo.from_local_datetime(&local).earliest() {
        return t.fixed_offset();
    }
    // In a gap: the offset a day before it (transitions are months apart).
    let before = Sao_Paulo
        .offset_from_utc_datetime(&(local - chrono::Duration::days(1)))
        .fix();
    before
        .from_local_datetime(&local)
        .single()
        .unwrap_or_else(|| local.and_utc().fixed_offset())
}

/// A decimal with a decimal comma and no trailing zeros (`7.50` -> `7,5`).
fn decimal_br(v: Decimal) -> String {
    let n = v.normalize();
    br::format_decimal(n, n.scale())
}

/// A single object as labelled fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields(Vec<(&'static str, &'static str, CellValue)>);

impl Fields {
    /// Empty.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds a field: `key` is the CSV header (the API's camelCase name where there is one),
    /// `label` the Portuguese label of the table.
    pub(crate) fn add(
        &mut self,
        key: &'static str,
        label: &'static str,
        valor: CellValue,
    ) -> &mut Self {
        self.0.push((key, label, valor));
        self
    }

    /// Adds a field titled from the SDK's title map (`carapi_sdk::labels`; the name itself
    /// when it has no title).
    pub(crate) fn titled(&mut self, key: &'static str, valor: CellValue) -> &mut Self {
        let label = carapi_sdk::labels::title(key).unwrap_or(key);
        self.add(key, label, valor)
    }

    /// A two-column table `Campo | Valor`, rendered, fitted to `width` columns when given
    /// ([`crate::layout::fields`]).
    pub(crate) fn to_table(&self, color: bool, width: Option<u16>) -> String {
        let mut t = base_table(color);
        t.set_header(vec![header("Campo", color), header("Valor", color)]);
        let rows: Vec<(&str, &str)> = self
            .0
            .iter()
            .map(|(_, r, v)| (*r, v.human.as_str()))
            .collect();
        crate::layout::fields(t, &rows, width)
    }

    /// As a one-row table (for CSV).
    pub(crate) fn as_listing(&self) -> Listing {
        let columns = self
            .0
            .iter()
            .map(|(c, r, _)| Column { key: c, label: r })
            .collect();
        Listing {
            columns,
            rows: vec![self.0.iter().map(|(_, _, v)| v.clone()).collect()],
            priority: vec![],
        }
    }
}

/// A column: CSV header and table label.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    /// CSV header.
    pub(crate) key: &'static str,
    /// Table label (Portuguese).
    pub(crate) label: &'static str,
}

/// A list of items, one row each.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    /// The columns.
    pub(crate) columns: Vec<Column>,
    /// The rows, each as long as `columns`.
    pub(crate) rows: Vec<Vec<CellValue>>,
    /// Indexes of the columns to keep first when the terminal is narrow (then the rest, in
    /// order); see [`Listing::priority`].
    pub(crate) priority: Vec<usize>,
}

impl Listing {
    /// A table with these `(key, label)` columns and no rows.
    pub(crate) fn new(columns: &[(&'static str, &'static str)]) -> Self {
        Listing {
            columns: columns
                .iter()
                .map(|&(key, label)| Column { key, label })
                .collect(),
            rows: vec![],
            priority: vec![],
        }
    }

    /// A table of these fields (their machine names: the CSV header of `-o csv-cru`), titled
    /// from the SDK's title map (`carapi_sdk::labels`), the name itself when it has no title.
    pub(crate) fn titled(fields: &[&'static str]) -> Self {
        let columns: Vec<(&'static str, &'static str)> = fields
            .iter()
            .map(|f| (*f, carapi_sdk::labels::title(f).unwrap_or(f)))
            .collect();
        Self::new(&columns)
    }

    /// The columns (by [`Column::key`]) a narrow terminal keeps first, most important first;
    /// the others follow in their order.
    pub(crate) fn priority(&mut self, keys: &[&str]) -> &mut Self {
        self.priority = keys
            .iter()
            .filter_map(|k| self.columns.iter().position(|c| c.key == *k))
            .collect();
        self
    }

    /// Appends a row.
    pub(crate) fn push_row(&mut self, cells: Vec<CellValue>) {
        debug_assert_eq!(cells.len(), self.columns.len());
        self.rows.push(cells);
    }

    /// The comfy-table rendering, fitted to `width` columns when given
    /// ([`crate::layout::list`]), with the labels of the columns left out.
    pub(crate) fn to_table(&self, color: bool, width: Option<u16>) -> crate::layout::FittedTable {
        let mut t = base_table(color);
        t.set_header(
            self.columns
                .iter()
                .map(|c| header(c.label, color))
                .collect::<Vec<_>>(),
        );
        let headings: Vec<&str> = self.columns.iter().map(|c| c.label).collect();
        let rows: Vec<Vec<&str>> = self
            .rows
            .iter()
            .map(|l| l.iter().map(|c| c.human.as_str()).collect())
            .collect();
        crate::layout::list(t, &headings, &rows, &self.priority, width)
    }
}

fn base_table(color: bool) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    if !color {
        t.force_no_tty();
    } else {
        t.enforce_styling();
    }
    t
}

fn header(text: &str, color: bool) -> Cell {
    let c = Cell::new(text);
    if color {
        c.add_attribute(Attribute::Bold)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brasilia_time_from_utc() {
        let t = DateTime::parse_from_rfc3339("2026-01-15T13:05:09Z").unwrap();
        assert_eq!(brasilia(t), "15/01/2026 10:05:09");
        // November 2018 was daylight-saving time: -02:00, whatever offset the text carried.
        let dst = DateTime::parse_from_rfc3339("2018-11-12T10:49:43-03:00").unwrap();
        assert_eq!(brasilia(dst), "12/11/2018 11:49:43");
        assert_eq!(in_brasilia(dst).offset().local_minus_utc(), -2 * 3600);
    }

    #[test]
    fn a_brasilia_wall_time_is_never_refused() {
        let at = |s: &str| {
            from_brasilia(NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap()).to_rfc3339()
        };
        assert_eq!(at("2026-05-01 00:00"), "2026-05-01T00:00:00-03:00");
        assert_eq!(at("2018-12-01 00:00"), "2018-12-01T00:00:00-02:00");
        // 4 November 2018: clocks went from 00:00 to 01:00 (a gap); the offset before it.
        assert_eq!(at("2018-11-04 00:30"), "2018-11-04T00:30:00-03:00");
        // 17 February 2019: 23:00-23:59 of the 16th happened twice; the first (earlier offset).
        assert_eq!(at("2019-02-16 23:30"), "2019-02-16T23:30:00-02:00");
    }

    #[test]
    fn cells() {
        assert_eq!(CellValue::percent(Decimal::new(750, 2)).human, "7,5%");
        assert_eq!(
            CellValue::money(Decimal::new(123456, 2)).human,
            "R$ 1.234,56"
        );
        assert_eq!(CellValue::money(Decimal::new(10, 0)).raw, "10.00");
        assert_eq!(CellValue::boolean(true).human, "sim");
    }

    #[test]
    fn table_without_colour_has_no_escapes() {
        let mut c = Fields::new();
        c.add("areaTotalHa", "Área total (ha)", CellValue::text("2,0131"));
        let s = c.to_table(false, None);
        assert!(s.contains("Área total (ha)") && s.contains("2,0131"));
        assert!(!s.contains('\x1b'));
    }
}
