//! The report of `carapi vigiar`: a table at the terminal's width (80 columns when stdout is
//! not a terminal), one block per code with its changes field by field; `-o json` (one object
//! per code) or `-o csv` (one row per change); the summary on stderr.

use carapi_sdk::domain::brl;
use rust_decimal::Decimal;

use super::{Outcome, Situacao};
use crate::changes::{Change, label};
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::output::OutputFormat;

/// Width of the table when stdout is not a terminal.
const DEFAULT_WIDTH: usize = 80;
/// Indent of a change line, and the label column after it.
const INDENT: usize = 2;
const LABEL: usize = 22;

/// Prints the report in `format`.
///
/// # Errors
/// Write errors (a closed stdout is exit 0).
pub(super) fn print(ctx: &mut Context, outcomes: &[Outcome], format: OutputFormat) -> Result<()> {
    match format {
        OutputFormat::Json => Ok(ctx.shell.json(outcomes)?),
        OutputFormat::Csv | OutputFormat::RawCsv => {
            Ok(ctx.shell.listing(&listing(outcomes), format)?)
        }
        _ => {
            let width = ctx.shell.width().map_or(DEFAULT_WIDTH, usize::from);
            Ok(ctx.shell.line(table(outcomes, width).trim_end())?)
        }
    }
}

/// The summary line on stderr.
pub(super) fn summary(ctx: &mut Context, outcomes: &[Outcome], spent: Decimal, bought: usize) {
    let count = |s: Situacao| outcomes.iter().filter(|o| o.situacao == s).count();
    let changed = outcomes.iter().filter(|o| o.changed()).count();
    ctx.shell.note(format!(
        "{} código(s): {} comprado(s) de novo ou pela primeira vez ({}), {} recente(s) no acervo, \
         {} com mudança, {} novo(s), {} não comprado(s).",
        outcomes.len(),
        bought,
        brl::format(spent),
        count(Situacao::Recente),
        changed,
        count(Situacao::Novo),
        count(Situacao::NaoComprado),
    ));
}

fn when(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map(crate::archive::when).unwrap_or_default()
}

/// The status of a code as the table says it.
fn status(o: &Outcome) -> String {
    let since = |o: &Outcome| match o.previously_bought_at {
        Some(t) => format!(" desde {}", crate::archive::when(t)),
        None => String::new(),
    };
    match o.situacao {
        Situacao::Mudou => format!("MUDOU{}", since(o)),
        Situacao::Igual => format!("sem mudança{}", since(o)),
        Situacao::Novo => "novo: comprado agora, nada a comparar".to_owned(),
        Situacao::Recente => format!(
            "recente no acervo (comprado em {}); não comprado",
            when(o.comprado_em)
        ),
        Situacao::NaoComprado => format!("não comprado: {}", o.message.as_deref().unwrap_or("")),
        Situacao::NaoEncontrado if o.previously_bought_at.is_some() => {
            format!("SAIU DO REGISTRO (404){}", since(o))
        }
        Situacao::NaoEncontrado => "não encontrado (404)".to_owned(),
        Situacao::Erro => format!("erro: {}", o.message.as_deref().unwrap_or("")),
    }
}

/// A change's value as the table says it: `+ x`, `- x`, or `a → b`.
fn value(c: &Change) -> String {
    let v = |s: &Option<String>| s.clone().unwrap_or_else(|| "—".to_owned());
    match (c.field.as_str(), &c.antes, &c.depois) {
        ("proprietarios", None, Some(d)) => format!("+ {d}"),
        ("proprietarios", Some(a), None) => format!("- {a}"),
        _ => format!("{} → {}", v(&c.antes), v(&c.depois)),
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines = vec![];
    let mut current = String::new();
    for word in text.split(' ') {
        let mut word = word.to_owned();
        while word.chars().count() > width {
            if !current.is_empty() {
                lines.push(std::mem::take(&mut current));
            }
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            lines.push(head);
        }
        let n = current.chars().count();
        if n > 0 && n + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&word);
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}

/// The table: per code, `<code>  <status>` (the status on the next line when it does not
/// fit), then one line per change, `<label> <value>`, values wrapped under themselves.
pub(super) fn table(outcomes: &[Outcome], width: usize) -> String {
    let mut out = String::new();
    for o in outcomes {
        let st = status(o);
        let one_line = o.codigo_car.chars().count() + 2 + st.chars().count();
        if one_line <= width {
            out.push_str(&format!("{}  {st}\n", o.codigo_car));
        } else {
            out.push_str(&o.codigo_car);
            out.push('\n');
            for l in wrap(&st, width.saturating_sub(INDENT)) {
                out.push_str(&format!("{}{l}\n", " ".repeat(INDENT)));
            }
        }
        for c in &o.mudancas {
            let name = label(&c.field);
            let room = width.saturating_sub(INDENT + LABEL + 1);
            for (i, l) in wrap(&value(c), room).iter().enumerate() {
                let head = if i == 0 { name } else { "" };
                out.push_str(&format!(
                    "{}{head:<w$} {l}\n",
                    " ".repeat(INDENT),
                    w = LABEL
                ));
            }
        }
    }
    out
}

/// One row per change (a code without changes: one row, `campo` empty).
fn listing(outcomes: &[Outcome]) -> Listing {
    let mut t = Listing::new(&[
        ("codigoCar", "Código CAR"),
        ("situacao", "Situação"),
        ("campo", "Campo"),
        ("antes", "Antes"),
        ("depois", "Depois"),
        ("compradoEm", "Comprado em"),
        ("anteriorCompradoEm", "Anterior comprado em"),
        ("mensagem", "Mensagem"),
    ]);
    for o in outcomes {
        let situacao = serde_json::to_value(o.situacao)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let iso = |t: Option<chrono::DateTime<chrono::Utc>>| {
            CellValue::optional_instant(t.map(|t| t.fixed_offset()))
        };
        let row = |c: Option<&Change>| {
            vec![
                CellValue::text(&o.codigo_car),
                CellValue::text(&situacao),
                CellValue::optional(c.map(|c| c.field.as_str())),
                CellValue::optional(c.and_then(|c| c.antes.as_deref())),
                CellValue::optional(c.and_then(|c| c.depois.as_deref())),
                iso(o.comprado_em),
                iso(o.previously_bought_at),
                CellValue::optional(o.message.as_deref()),
            ]
        };
        if o.mudancas.is_empty() {
            t.push_row(row(None));
        }
        for c in &o.mudancas {
            t.push_row(row(Some(c)));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_fits_80_columns() {
        let o = Outcome {
            codigo_car: "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47".into(),
            situacao: Situacao::Mudou,
            comprado_em: None,
            previously_bought_at: Some(chrono::Utc::now()),
            mudancas: vec![Change {
                field: "proprietarios".into(),
                antes: None,
                depois: Some(
                    "529.982.247-25 Fulana de Tal com um nome muito comprido de verdade mesmo"
                        .into(),
                ),
            }],
            message: None,
        };
        let t = table(&[o], 80);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        assert!(t.contains("+ 529.982.247-25"), "{t}");
    }
}
