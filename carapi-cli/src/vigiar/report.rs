//! The report of `carapi vigiar`: a table at the terminal's width (80 columns when stdout is
//! not a terminal), one block per code with its changes field by field; `-o json` (one object
//! per code) or `-o csv` (one row per change); the summary on stderr.

use carapi_sdk::domain::brl;
use rust_decimal::Decimal;

use super::{Outcome, Verdict};
use crate::changes::Change;
use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::output::OutputFormat;

/// Width of the table when stdout is not a terminal.
const DEFAULT_WIDTH: usize = 80;
/// Indent of a change line, and the label column after it.
const INDENT: usize = 2;
const LABEL: usize = 24;

/// Prints the report in `format`.
///
/// # Errors
/// Write errors (a closed stdout is exit 0).
pub(crate) fn print(ctx: &mut Context, outcomes: &[Outcome], format: OutputFormat) -> Result<()> {
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

/// The summary line on stderr: what was bought (a 404 is no purchase: the code left the
/// registry, or was never in it), what changed, what was left.
pub(crate) fn summary(ctx: &mut Context, outcomes: &[Outcome], spent: Decimal) {
    let count = |s: Verdict| outcomes.iter().filter(|o| o.verdict == s).count();
    let bought = outcomes.iter().filter(|o| o.bought()).count();
    let changed = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Changed)
        .count();
    let left = outcomes.iter().filter(|o| o.left_registry()).count();
    ctx.shell.note(format!(
        "{} código(s): {} comprado(s) de novo ou pela primeira vez ({}), {} recente(s) no acervo, \
         {} com mudança, {} saiu(íram) do cadastro, {} novo(s), {} não comprado(s).",
        outcomes.len(),
        bought,
        brl::format(spent),
        count(Verdict::Fresh),
        changed,
        left,
        count(Verdict::New),
        count(Verdict::NotBought),
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
    match o.verdict {
        Verdict::Changed => format!("MUDOU{}", since(o)),
        Verdict::Unchanged => format!("sem mudança{}", since(o)),
        Verdict::New => "novo: comprado agora, nada a comparar".to_owned(),
        Verdict::Fresh => format!(
            "recente no acervo (comprado em {}); não comprado",
            when(o.bought_at)
        ),
        Verdict::NotBought => format!("não comprado: {}", o.message.as_deref().unwrap_or("")),
        Verdict::NotFound if o.left_registry() => {
            format!("SAIU DO CADASTRO (404){}", since(o))
        }
        Verdict::NotFound => "não encontrado (404)".to_owned(),
        Verdict::Failed => format!("erro: {}", o.message.as_deref().unwrap_or("")),
    }
}

/// A change's value as the table says it: `+ x`, `- x`, or `a → b`; an instant in Brasília
/// time, as every time a person reads.
fn value(c: &Change) -> String {
    let v = |s: &Option<String>| match s {
        Some(s) => human(&c.field, s),
        None => "—".to_owned(),
    };
    match (c.field.as_str(), &c.before, &c.after) {
        ("proprietarios", None, Some(d)) => format!("+ {d}"),
        ("proprietarios", Some(a), None) => format!("- {a}"),
        _ => format!("{} → {}", v(&c.before), v(&c.after)),
    }
}

/// A changed value as a person reads it: an instant (`dataExpiracao`, RFC 3339 in the
/// answer) in Brasília time with the offset it had, anything else as the registry writes it.
fn human(field: &str, value: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(value) {
        Ok(t) if field == "dataExpiracao" => crate::format::brasilia(t),
        _ => value.to_owned(),
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
pub(crate) fn table(outcomes: &[Outcome], width: usize) -> String {
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
            let name = carapi_sdk::labels::title_or_name(&c.field);
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
    let mut t = Listing::titled(&[
        "codigoCar",
        "situacao",
        "campo",
        "antes",
        "depois",
        "compradoEm",
        "anteriorCompradoEm",
        "mensagem",
    ]);
    for o in outcomes {
        let verdict = serde_json::to_value(o.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let iso = |t: Option<chrono::DateTime<chrono::Utc>>| {
            CellValue::optional_instant(t.map(|t| t.fixed_offset()))
        };
        let changed = |c: Option<&Change>, v: Option<&String>| match (c, v) {
            (Some(c), Some(v)) => CellValue {
                human: human(&c.field, v),
                raw: v.clone(),
            },
            _ => CellValue::optional(None),
        };
        let row = |c: Option<&Change>| {
            vec![
                CellValue::text(&o.codigo_car),
                CellValue::text(&verdict),
                CellValue::optional(c.map(|c| c.field.as_str())),
                changed(c, c.and_then(|c| c.before.as_ref())),
                changed(c, c.and_then(|c| c.after.as_ref())),
                iso(o.bought_at),
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
            verdict: Verdict::Changed,
            bought_at: None,
            previously_bought_at: Some(chrono::Utc::now()),
            mudancas: vec![Change {
                field: "proprietarios".into(),
                before: None,
                after: Some(
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
