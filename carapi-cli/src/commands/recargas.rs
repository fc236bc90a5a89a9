//! `carapi recargas [--status S] [--pagina N] [--por-pagina N]`: top-up history (free).

use carapi_sdk::{RecargaStatus, RecargasParams};

use crate::context::Context;
use crate::error::Result;
use crate::format::{Celula, Tabela};
use crate::options::FormatArgs;
use crate::output::Formato;

/// Arguments of `carapi recargas`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Só recargas neste status: Pendente, Confirmado ou Rejeitado
    #[arg(long, value_name = "STATUS", value_parser = parse_status)]
    pub status: Option<RecargaStatus>,
    /// Página (a partir de 1)
    #[arg(long = "pagina", alias = "page", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub page: Option<u32>,
    /// Itens por página (máximo 100)
    #[arg(long = "por-pagina", alias = "size", value_name = "N", value_parser = crate::parsers::parse_positive)]
    pub size: Option<u32>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub formato: FormatArgs,
}

fn parse_status(s: &str) -> Result<RecargaStatus, String> {
    s.parse()
}

/// Runs `carapi recargas`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let formato = ctx.formato(args.formato);
    let client = ctx.client().await?;
    let r = client
        .recargas(&RecargasParams {
            page: args.page,
            size: crate::parsers::page_size(ctx, args.size),
            status: args.status,
        })
        .await?;
    if formato == Formato::Json {
        return Ok(ctx.shell.json(&r)?);
    }
    ctx.shell.status(format!(
        "Página {} de {} ({} recargas)",
        r.page,
        r.total_paginas.max(1),
        r.total
    ));
    let mut t = Tabela::new(&[
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
        t.linha(vec![
            Celula::text(i.recarga_id.to_string()),
            Celula::instante(i.data),
            Celula::text(i.status.as_str()),
            Celula::dinheiro(i.valor_pago),
            Celula::percentual(i.percentual_bonus),
            Celula::dinheiro(i.valor_bonus),
            Celula::dinheiro(i.total_creditado),
            Celula::instante_opcional(i.data_confirmacao),
        ]);
    }
    ctx.paginar(formato);
    Ok(ctx.shell.tabela(&t, formato)?)
}
