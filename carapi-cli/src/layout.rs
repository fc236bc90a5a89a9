//! Tables laid out for the terminal's width, as gh does: a value that must stay whole (a number,
//! a date, a CAR code, money: any value without spaces, money and dates) is never split; text
//! cells of a list are cut to one line with `…`; columns that do not fit are left out (the least
//! important first) and [`FittedTable::omitted`] names them so the caller can say how to see
//! everything. comfy-table draws: each column gets an absolute width
//! ([`ColumnConstraint::Absolute`]), rows of a list a height of one line ([`Row::max_height`])
//! with comfy-table's truncation indicator.

use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Row, Table, Width, presets};

/// Columns a text cell of a list keeps before it is cut with `…`.
const MIN_TEXT: usize = 10;

/// Width of the borders of [`presets::UTF8_FULL_CONDENSED`] with one space of padding each side:
/// `│ a │ b │` is `1 + 3 × columns`.
fn borders(columns: usize) -> usize {
    1 + 3 * columns
}

/// Width on screen of `s` (every character the CLI prints is one column wide).
pub(crate) fn width(s: &str) -> usize {
    s.chars().count()
}

/// True when `s` must not be split over lines: no spaces, or money (`R$ 1.234,56`), or a date
/// and time (`09/05/2014 17:16:10`).
fn is_whole(s: &str) -> bool {
    !s.contains(' ') || s.starts_with("R$ ") || is_date_time(s)
}

fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19 && b[2] == b'/' && b[5] == b'/' && b[10] == b' ' && b[13] == b':'
}

/// The longest word of `s`.
fn longest_word(s: &str) -> usize {
    s.split(' ').map(width).max().unwrap_or(0)
}

/// What a column needs: at least `minimum` (whole values, a cut text, the header's longest word),
/// at most `natural` (everything on one line).
#[derive(Debug, Clone, Copy)]
struct Measure {
    minimum: usize,
    natural: usize,
}

fn measure<'a>(headings: &str, values: impl Iterator<Item = &'a str>, cut: bool) -> Measure {
    let mut m = Measure {
        minimum: longest_word(headings),
        natural: width(headings),
    };
    for v in values {
        let w = width(v);
        m.natural = m.natural.max(w);
        let minimum = if is_whole(v) {
            w
        } else if cut {
            w.min(MIN_TEXT)
        } else {
            longest_word(v)
        };
        m.minimum = m.minimum.max(minimum);
    }
    m
}

/// A table fitted to a width.
#[derive(Debug)]
pub(crate) struct FittedTable {
    /// The table to print.
    pub(crate) table: Table,
    /// Labels of the columns left out for lack of width (empty when all fit).
    pub(crate) omitted: Vec<String>,
}

/// A list fitted to `width` columns (`table` already has its header, whose labels are
/// `headings`; the rows are added here): columns are kept by `priority`
/// (indexes, most important first; the rest in order after them) while their minimum fits, shown
/// in their own order; the spare width goes to the cut text columns. `None`: natural width.
pub(crate) fn list(
    mut table: Table,
    headings: &[&str],
    rows: &[Vec<&str>],
    priority: &[usize],
    max_width: Option<u16>,
) -> FittedTable {
    let Some(max) = max_width.map(usize::from) else {
        for l in rows {
            table.add_row(l.clone());
        }
        return FittedTable {
            table,
            omitted: vec![],
        };
    };
    let measures: Vec<Measure> = headings
        .iter()
        .enumerate()
        .map(|(j, h)| measure(h, rows.iter().map(|l| l[j]), true))
        .collect();
    let order = priority
        .iter()
        .copied()
        .chain(0..headings.len())
        .filter(|j| *j < headings.len());
    let mut visible = vec![false; headings.len()];
    let mut used = 1;
    for j in order {
        if visible[j] {
            continue;
        }
        if used + measures[j].minimum + 3 <= max {
            used += measures[j].minimum + 3;
            visible[j] = true;
        }
    }
    let mut widths: Vec<usize> = measures.iter().map(|m| m.minimum).collect();
    let mut spare = max.saturating_sub(used);
    // The spare width: first headers on one line, then whole text cells.
    let targets: [Box<dyn Fn(usize) -> usize>; 2] = [
        Box::new(|j| width(headings[j]).min(measures[j].natural)),
        Box::new(|j| measures[j].natural),
    ];
    for target in targets {
        for j in (0..headings.len()).filter(|j| visible[*j]) {
            let extra = target(j).saturating_sub(widths[j]).min(spare);
            widths[j] += extra;
            spare -= extra;
        }
    }
    for l in rows {
        let mut row = Row::from(l.iter().map(Cell::new).collect::<Vec<_>>());
        row.max_height(1);
        table.add_row(row);
    }
    table
        .set_width(u16::try_from(max).unwrap_or(u16::MAX))
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_truncation_indicator("…");
    let omitted = constrain(&mut table, &widths, &visible, headings);
    FittedTable { table, omitted }
}

fn constrain(
    table: &mut Table,
    widths: &[usize],
    visible: &[bool],
    headings: &[&str],
) -> Vec<String> {
    let mut omitted = vec![];
    for (j, col) in table.column_iter_mut().enumerate() {
        if visible[j] {
            let w = u16::try_from(widths[j] + 2).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
        } else {
            col.set_constraint(ColumnConstraint::Hidden);
            omitted.push(headings[j].to_owned());
        }
    }
    omitted
}

/// Labelled fields (`table` has the header `Campo | Valor`; the rows are added here) fitted
/// to `width` columns, rendered: labels and text values wrap at spaces, whole values never
/// split; when that does not fit, the borders go (two columns separated by spaces), and when
/// even that does not fit (a 50-character protocol code at 60 columns), each label is followed
/// by its value on the next line, indented.
pub(crate) fn fields(mut table: Table, rows: &[(&str, &str)], max_width: Option<u16>) -> String {
    for (r, v) in rows {
        table.add_row(vec![*r, *v]);
    }
    let Some(max) = max_width.map(usize::from) else {
        return table.to_string();
    };
    let label = measure("Campo", rows.iter().map(|(r, _)| *r), false);
    let value = measure("Valor", rows.iter().map(|(_, v)| *v), false);
    if label.natural + value.natural + borders(2) <= max {
        return table.to_string();
    }
    let mut border = borders(2);
    if label.minimum + value.minimum + border > max {
        border = 4;
        if label.minimum + value.minimum + border > max {
            return stacked(rows, max);
        }
        table.load_preset(presets::NOTHING);
    }
    let free = max.saturating_sub(border);
    let r = label
        .natural
        .min(free.saturating_sub(value.minimum))
        .max(label.minimum);
    let v = free.saturating_sub(r).max(value.minimum);
    table
        .set_width(u16::try_from(max).unwrap_or(u16::MAX))
        .set_content_arrangement(ContentArrangement::Dynamic);
    for (col, w) in table.column_iter_mut().zip([r, v]) {
        let w = u16::try_from(w + 2).unwrap_or(u16::MAX);
        col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
    }
    table.to_string()
}

/// `Rótulo:` then the value on the next line, indented by two spaces; text values wrapped at
/// spaces to `max`.
fn stacked(rows: &[(&str, &str)], max: usize) -> String {
    let mut out = String::new();
    for (r, v) in rows {
        out.push_str(r);
        out.push_str(":\n");
        let mut line = String::from(" ");
        for word in v.split(' ') {
            if width(&line) + 1 + width(word) > max && width(&line) > 1 {
                out.push_str(&line);
                out.push('\n');
                line = String::from(" ");
            }
            line.push(' ');
            line.push_str(word);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Table {
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED).force_no_tty();
        t
    }

    const CODE: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

    #[test]
    fn whole_values_are_never_split_and_text_is_cut() {
        let headers = ["Código CAR", "Nome do imóvel", "Área total (ha)", "Valor"];
        let rows = vec![
            vec![
                CODE,
                "FAZENDA BOA VISTA DO RIO VERDE",
                "198,915",
                "R$ 49,70",
            ],
            vec![CODE, "SÍTIO", "9", "R$ 1.234,56"],
        ];
        for w in [80u16, 60] {
            let mut t = base();
            t.set_header(headers.to_vec());
            let a = list(t, &headers, &rows, &[], Some(w));
            let s = a.table.to_string();
            assert!(s.lines().all(|l| width(l) <= usize::from(w)), "{w}:\n{s}");
            assert!(s.contains(CODE), "{s}");
            if w == 80 {
                assert!(s.contains("198,915") && s.contains("Área total"), "{s}");
                assert!(s.contains("FAZENDA BOA") && s.contains('…'), "{s}");
                assert_eq!(a.omitted, ["Valor"]);
            } else {
                assert!(!a.omitted.is_empty(), "{s}");
            }
        }
    }

    #[test]
    fn fields_fit_60_columns_without_splitting_a_code() {
        let rows = [
            ("Código CAR", CODE),
            ("Da base consolidada (cache)", "sim"),
            ("Data da consulta", "09/05/2014 17:16:10"),
            ("Proprietários", "JOÃO DA SILVA E MARIA DE SOUZA SANTOS"),
        ];
        let protocol = "DF-5300108-0000.0000.0000.0000.0000.0000.0000.0001";
        let mut with_protocol = rows.to_vec();
        with_protocol.push(("Código de protocolo", protocol));
        for (w, rows) in [
            (80u16, &rows[..]),
            (60, &rows[..]),
            (60, &with_protocol[..]),
        ] {
            let mut t = base();
            t.set_header(vec!["Campo", "Valor"]);
            let s = fields(t, rows, Some(w));
            assert!(s.lines().all(|l| width(l) <= usize::from(w)), "{w}:\n{s}");
            assert!(s.contains(CODE) && s.contains("09/05/2014 17:16:10"), "{s}");
        }
    }
}
