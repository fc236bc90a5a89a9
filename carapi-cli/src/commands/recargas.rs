//! `carapi recargas [--status S] [--pagina N] [--por-pagina N]`: top-up history (free).

use carapi_sdk::{RecargaStatus, RecargasParams};

use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Listing};
use crate::options::FormatArgs;
use crate::output::OutputFormat;

/// Arguments of `carapi recargas`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Só recargas neste status: Pendente, Confirmado ou Rejeitado
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub(crate) status: Option<RecargaStatus>,
    /// Página (a partir de 1)
    #[arg(long = "pagina", alias = "page", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub(crate) page: Option<u32>,
    /// Itens por página (máximo 100)
    #[arg(long = "por-pagina", alias = "size", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub(crate) size: Option<u32>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

fn parse_status(s: &str) -> Result<RecargaStatus, String> {
    s.parse()
}

/// Runs `carapi recargas`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let client = ctx.client().await?;
    let r = client
        .recargas(&RecargasParams {
            page: args.page,
            size: crate::parsers::page_size(ctx, args.size),
            status: args.status,
        })
        .await?;
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(&r)?);
    }
    ctx.shell.status(format!(
        "Página {} de {} ({} recargas)",
        r.page,
        r.total_paginas.max(1),
        r.total
    ));
    let mut t = Listing::new(&[
        ("recargaId", "ID"),
        ("data", "Criada em"),
        ("status", "Status"),
        ("valorPago", "Valor pago"),
        ("percentualBonus", "Bônus (%)"),
        ("valorBonus", "Bônus"),
        ("totalCreditado", "Total creditado"),
        ("dataConfirmacao", "Confirmada em"),
    ]);
    for i in &r.itens {
        t.push_row(vec![
            CellValue::text(i.recarga_id.to_string()),
            CellValue::instant(i.data),
            CellValue::text(i.status.as_str()),
            CellValue::money(i.valor_pago),
            CellValue::percent(i.percentual_bonus),
            CellValue::money(i.valor_bonus),
            CellValue::money(i.total_creditado),
            CellValue::optional_instant(i.data_confirmacao),
        ]);
    }
    ctx.use_pager(format);
    Ok(ctx.shell.listing(&t, format)?)
}
