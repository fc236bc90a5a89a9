//! Formatting for people and for CSV: each cell carries both forms.
//!
//! Tables show money as `R$ 1.234,56` (SDK `domain::brl::format`), timestamps in Brasília time
//! (`America/Sao_Paulo`, `dd/mm/aaaa hh:mm:ss`) and booleans as `sim`/`não`; the machine's CSV
//! (`-o csv-cru`) gets the raw form (`1234.56`, RFC 3339, `true`/`false`) so a script can read it
//! back, the analyst's (`-o csv`) the form Excel in Portuguese reads ([`Celula::planilha`]).

use carapi_sdk::domain::{br, brl};
use chrono::{DateTime, FixedOffset};
use chrono_tz::America::Sao_Paulo;
use comfy_table::{Attribute, Cell, ContentArrangement, Table, presets};
use rust_decimal::Decimal;

/// The UTF-8 byte order mark that tells Excel a CSV is UTF-8 (the analyst's CSV starts with it).
pub const BOM: &str = "\u{feff}";

/// One value in two forms: for a table (`humano`) and for CSV (`bruto`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Celula {
    /// Shown in tables.
    pub humano: String,
    /// Written to CSV.
    pub bruto: String,
}

impl Celula {
    /// Text, the same in both forms.
    pub fn text(s: impl Into<String>) -> Self {
        let s = s.into();
        Celula {
            humano: s.clone(),
            bruto: s,
        }
    }

    /// Optional text: `—` in tables, empty in CSV when absent.
    pub fn opcional(s: Option<&str>) -> Self {
        match s {
            Some(s) => Self::text(s),
            None => Celula {
                humano: "—".into(),
                bruto: String::new(),
            },
        }
    }

    /// Money in BRL: `R$ 1.234,56` / `1234.56`.
    pub fn dinheiro(v: Decimal) -> Self {
        Celula {
            humano: brl::format(v),
            bruto: format!("{:.2}", brl::centavos(v)),
        }
    }

    /// Optional money; `vazio` is what a table shows when absent (e.g. "sem limite").
    pub fn dinheiro_opcional(v: Option<Decimal>, vazio: &str) -> Self {
        match v {
            Some(v) => Self::dinheiro(v),
            None => Celula {
                humano: vazio.into(),
                bruto: String::new(),
            },
        }
    }

    /// An integer.
    pub fn inteiro(v: impl std::fmt::Display) -> Self {
        Self::text(v.to_string())
    }

    /// A percentage given in percent points (`5` -> `5%`, `7.5` -> `7,5%`).
    pub fn percentual(v: Decimal) -> Self {
        Celula {
            humano: format!("{}%", decimal_br(v)),
            bruto: v.normalize().to_string(),
        }
    }

    /// A boolean: `sim`/`não` / `true`/`false`.
    pub fn booleano(v: bool) -> Self {
        Celula {
            humano: if v { "sim" } else { "não" }.into(),
            bruto: v.to_string(),
        }
    }

    /// An instant, shown in Brasília time; RFC 3339 in CSV.
    pub fn instante(v: DateTime<FixedOffset>) -> Self {
        Celula {
            humano: brasilia(v),
            bruto: v.to_rfc3339(),
        }
    }

    /// An optional instant.
    pub fn instante_opcional(v: Option<DateTime<FixedOffset>>) -> Self {
        match v {
            Some(v) => Self::instante(v),
            None => Celula {
                humano: "—".into(),
                bruto: String::new(),
            },
        }
    }
}

impl Celula {
    /// The value in the analyst's CSV (Excel in Portuguese): a raw decimal with a decimal comma
    /// (`1234,56`, no grouping, so it stays a number), an instant and a boolean as a table shows
    /// them (Brasília time, `sim`/`não`), anything else raw.
    pub fn planilha(&self) -> String {
        let b = self.bruto.as_str();
        if b == "true" || b == "false" || DateTime::parse_from_rfc3339(b).is_ok() {
            return self.humano.clone();
        }
        let numero = b.strip_prefix('-').unwrap_or(b);
        match numero.split_once('.') {
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

/// `dd/mm/aaaa hh:mm:ss` in Brasília time (America/Sao_Paulo, which has had no DST since 2019).
pub fn brasilia(v: DateTime<FixedOffset>) -> String {
    v.with_timezone(&Sao_Paulo)
        .format("%d/%m/%Y %H:%M:%S")
        .to_string()
}

/// A decimal with a decimal comma and no trailing zeros (`7.50` -> `7,5`).
pub fn decimal_br(v: Decimal) -> String {
    let n = v.normalize();
    br::format_decimal(n, n.scale())
}

/// A single object as labelled fields.
#[derive(Debug, Clone, Default)]
pub struct Campos(Vec<(&'static str, &'static str, Celula)>);

impl Campos {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field: `key` is the CSV header (the API's camelCase name where there is one),
    /// `rotulo` the Portuguese label of the table.
    pub fn add(&mut self, key: &'static str, rotulo: &'static str, valor: Celula) -> &mut Self {
        self.0.push((key, rotulo, valor));
        self
    }

    /// A two-column table `Campo | Valor`, rendered, fitted to `largura` columns when given
    /// ([`crate::layout::campos`]).
    pub fn to_table(&self, color: bool, largura: Option<u16>) -> String {
        let mut t = base_table(color);
        t.set_header(vec![header("Campo", color), header("Valor", color)]);
        let linhas: Vec<(&str, &str)> = self
            .0
            .iter()
            .map(|(_, r, v)| (*r, v.humano.as_str()))
            .collect();
        crate::layout::campos(t, &linhas, largura)
    }

    /// As a one-row table (for CSV).
    pub fn as_tabela(&self) -> Tabela {
        let colunas = self
            .0
            .iter()
            .map(|(c, r, _)| Coluna { key: c, rotulo: r })
            .collect();
        Tabela {
            colunas,
            linhas: vec![self.0.iter().map(|(_, _, v)| v.clone()).collect()],
            prioridade: vec![],
        }
    }
}

/// A column: CSV header and table label.
#[derive(Debug, Clone, Copy)]
pub struct Coluna {
    /// CSV header.
    pub key: &'static str,
    /// Table label (Portuguese).
    pub rotulo: &'static str,
}

/// A list of items, one row each.
#[derive(Debug, Clone, Default)]
pub struct Tabela {
    /// The columns.
    pub colunas: Vec<Coluna>,
    /// The rows, each as long as `colunas`.
    pub linhas: Vec<Vec<Celula>>,
    /// Indexes of the columns to keep first when the terminal is narrow (then the rest, in
    /// order); see [`Tabela::prioridade`].
    pub prioridade: Vec<usize>,
}

impl Tabela {
    /// A table with these `(key, rotulo)` columns and no rows.
    pub fn new(colunas: &[(&'static str, &'static str)]) -> Self {
        Tabela {
            colunas: colunas
                .iter()
                .map(|&(key, rotulo)| Coluna { key, rotulo })
                .collect(),
            linhas: vec![],
            prioridade: vec![],
        }
    }

    /// The columns (by [`Coluna::key`]) a narrow terminal keeps first, most important first;
    /// the others follow in their order.
    pub fn prioridade(&mut self, keys: &[&str]) -> &mut Self {
        self.prioridade = keys
            .iter()
            .filter_map(|k| self.colunas.iter().position(|c| c.key == *k))
            .collect();
        self
    }

    /// Appends a row.
    pub fn linha(&mut self, celulas: Vec<Celula>) {
        debug_assert_eq!(celulas.len(), self.colunas.len());
        self.linhas.push(celulas);
    }

    /// The comfy-table rendering, fitted to `largura` columns when given
    /// ([`crate::layout::list`]), with the labels of the columns left out.
    pub fn to_table(&self, color: bool, largura: Option<u16>) -> crate::layout::Ajuste {
        let mut t = base_table(color);
        t.set_header(
            self.colunas
                .iter()
                .map(|c| header(c.rotulo, color))
                .collect::<Vec<_>>(),
        );
        let cabecalho: Vec<&str> = self.colunas.iter().map(|c| c.rotulo).collect();
        let linhas: Vec<Vec<&str>> = self
            .linhas
            .iter()
            .map(|l| l.iter().map(|c| c.humano.as_str()).collect())
            .collect();
        crate::layout::list(t, &cabecalho, &linhas, &self.prioridade, largura)
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
    }

    #[test]
    fn cells() {
        assert_eq!(Celula::percentual(Decimal::new(750, 2)).humano, "7,5%");
        assert_eq!(
            Celula::dinheiro(Decimal::new(123456, 2)).humano,
            "R$ 1.234,56"
        );
        assert_eq!(Celula::dinheiro(Decimal::new(10, 0)).bruto, "10.00");
        assert_eq!(Celula::booleano(true).humano, "sim");
    }

    #[test]
    fn table_without_colour_has_no_escapes() {
        let mut c = Campos::new();
        c.add("areaTotalHa", "Área total (ha)", Celula::text("2,0131"));
        let s = c.to_table(false, None);
        assert!(s.contains("Área total (ha)") && s.contains("2,0131"));
        assert!(!s.contains('\x1b'));
    }
}
