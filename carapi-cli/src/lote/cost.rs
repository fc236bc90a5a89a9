//! The cost of a batch, before anything is sent: how many lookups, the maximum at the account's
//! effective prices (`saldo().precos`; sandbox keys are free), the balance and `--max-custo`;
//! then the confirmation (`--sim` skips it; with no terminal and no `--sim` nothing is sent).

use carapi_sdk::domain::brl;
use carapi_sdk::{Client, ClientBuilder};
use rust_decimal::Decimal;

use super::Opcoes;
use super::plano::Plano;
use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use crate::prompt;

/// The client a batch runs with (the account's prices known, `--max-custo` as its spend cap) and
/// the price of one lookup.
#[derive(Debug)]
pub struct Aprovado {
    /// The client.
    pub client: Client,
    /// The price of one charged lookup of this batch, BRL.
    pub preco: Decimal,
}

/// Shows the plan's cost and asks; `None` when there is nothing to send.
///
/// # Errors
/// No terminal without `--sim` (2, nothing sent); a refusal (1); the balance request's errors.
pub async fn aprovar(
    ctx: &mut Context,
    op: &Opcoes,
    plano: &Plano,
    base: ClientBuilder,
) -> Result<Option<Aprovado>> {
    if plano.pendentes.is_empty() {
        return Ok(None);
    }
    let s = base.clone().build()?.saldo().await?;
    let preco = op.tipo.preco(&s.precos);
    let cobraveis = plano
        .pendentes
        .iter()
        .filter(|k| !op.tipo.is_sandbox(k))
        .count();
    let maximo = preco * Decimal::from(cobraveis);
    let mut text = format!(
        "Lote: {} consulta(s) {} a {} cada; custo máximo {}; saldo {}",
        plano.pendentes.len(),
        op.tipo.name(),
        brl::format(preco),
        brl::format(maximo),
        brl::format(s.saldo_reais)
    );
    if let Some(m) = op.max_custo {
        text.push_str(&format!("; limite --max-custo {}", brl::format(m)));
    }
    ctx.shell.note(format!("{text}."));
    if maximo > s.saldo_reais && !preco.is_zero() {
        let cabe = (s.saldo_reais / preco).floor();
        ctx.shell.warn(format!(
            "o saldo cobre cerca de {cabe} consulta(s); o lote para quando o saldo acabar (recarga: carapi recarga criar 500)"
        ));
    }
    confirmar(ctx, op.yes)?;
    let mut b = base.precos(s.precos);
    if let Some(m) = op.max_custo {
        b = b.max_spend(m);
    }
    Ok(Some(Aprovado {
        client: b.build()?,
        preco,
    }))
}

fn confirmar(ctx: &mut Context, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !ctx.shell.can_prompt() {
        return Err(CliError::new(
            Kind::Usage,
            "CONFIRMACAO_NECESSARIA",
            "sem terminal para confirmar o gasto; nada foi enviado",
        )
        .hint("confira o custo acima e repita com --sim"));
    }
    if prompt::confirmar("Continuar?")? {
        Ok(())
    } else {
        Err(CliError::other(
            "CANCELADO",
            "lote cancelado; nada foi enviado",
        ))
    }
}
