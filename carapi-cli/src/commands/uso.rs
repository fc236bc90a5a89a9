//! `carapi uso`: usage per endpoint over the last 30 days (free).

use crate::cli::FormatoArgs;
use crate::context::Context;
use crate::error::Result;
use crate::format::{Celula, Tabela};
use crate::output::Formato;

/// Arguments of `carapi uso`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub formato: FormatoArgs,
}

/// Runs `carapi uso`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let formato = ctx.formato(args.formato);
    let u = ctx.client().await?.uso().await?;
    if formato == Formato::Json {
        return Ok(ctx.shell.json(&u)?);
    }
    let mut t = Tabela::new(&[
        ("endpoint", "Endpoint"),
        ("quantidade", "Quantidade"),
        ("valorTotal", "Valor total"),
    ]);
    for i in &u.itens {
        t.linha(vec![
            Celula::texto(&i.endpoint),
            Celula::inteiro(i.quantidade),
            Celula::dinheiro(i.valor_total),
        ]);
    }
    ctx.shell.tabela(&t, formato)?;
    ctx.shell.status(format!("Últimos {} dias", u.periodo_dias));
    Ok(())
}
