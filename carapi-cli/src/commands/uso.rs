//! `carapi uso`: usage per endpoint over the last 30 days (free).

use carapi_sdk::domain::brl;
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::options::FormatOnly;
use crate::output::OutputFormat;

/// Arguments of `carapi uso`: `-o/--formato` only.
pub(crate) type Args = FormatOnly;

/// Runs `carapi uso`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let answer = ctx.client().await?.uso().await?;
    let Some(u) = ctx.free_answer(format, answer)? else {
        return Ok(());
    };
    let mut t = Listing::new(&[
        ("endpoint", "Endpoint"),
        ("quantidade", "Quantidade"),
        ("valorTotal", "Valor total"),
    ]);
    for i in &u.itens {
        t.push_row(vec![
            CellValue::text(i.endpoint.as_str()),
            CellValue::integer(i.quantidade),
            CellValue::money(i.valor_total),
        ]);
    }
    ctx.shell.listing(&t, format)?;
    ctx.shell.status(format!("Últimos {} dias", u.periodo_dias));
    if format == OutputFormat::Table && ctx.shell.out_is_tty() && !u.itens.is_empty() {
        let width = usize::from(ctx.shell.width().unwrap_or(80));
        let itens: Vec<(String, Decimal)> = u
            .itens
            .iter()
            .map(|i| (i.endpoint.to_string(), i.valor_total))
            .collect();
        ctx.shell.line("")?;
        ctx.shell.line("Gasto por endpoint:")?;
        for l in bar_chart(&itens, width) {
            ctx.shell.line(l)?;
        }
    }
    Ok(())
}

/// A horizontal bar chart of amounts, one line per label, no line wider than `width` columns:
/// `label  ████▌ R$ 12,50`, the longest bar for the largest amount (eighth blocks for the rest).
fn bar_chart(itens: &[(String, Decimal)], width: usize) -> Vec<String> {
    let label_width = itens
        .iter()
        .map(|(r, _)| r.chars().count())
        .max()
        .unwrap_or(0)
        .min(width / 3);
    let values: Vec<String> = itens.iter().map(|(_, v)| brl::format(*v)).collect();
    let value_width = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    let max_bar = width.saturating_sub(label_width + value_width + 3).max(1);
    let largest = itens.iter().map(|(_, v)| *v).max().unwrap_or_default();
    itens
        .iter()
        .zip(&values)
        .map(|((r, v), text)| {
            let eighths = if largest.is_zero() {
                0
            } else {
                (*v * Decimal::from(max_bar * 8) / largest)
                    .round()
                    .to_usize()
                    .unwrap_or(0)
            };
            let mut bar = "█".repeat(eighths / 8);
            if eighths % 8 > 0 {
                bar.push([' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8]);
            }
            let r: String = r.chars().take(label_width).collect();
            format!("{r:<label_width$} {bar} {text}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_and_fit() {
        let itens = vec![
            ("/v1/car".to_owned(), Decimal::new(1200, 2)),
            ("/v1/proprietario".to_owned(), Decimal::new(300, 2)),
            ("/v1/car/completo".to_owned(), Decimal::ZERO),
        ];
        let l = bar_chart(&itens, 60);
        assert_eq!(l.len(), 3);
        assert!(l.iter().all(|l| l.chars().count() <= 60), "{l:#?}");
        let blocks = |s: &str| s.chars().filter(|c| *c == '█').count();
        assert!(blocks(&l[0]) > 3 * blocks(&l[1]));
        assert_eq!(blocks(&l[2]), 0);
        assert!(l[0].ends_with("R$ 12,00"));
    }
}
