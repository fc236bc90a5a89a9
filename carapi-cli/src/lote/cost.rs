//! The cost of a batch, before anything is sent: how many lookups, the maximum at the account's
//! effective prices (`saldo().precos`; sandbox keys are free), the balance and `--max-custo`;
//! then the confirmation (`--sim` skips it; with no terminal and no `--sim` nothing is sent).

use carapi_sdk::domain::brl;
use carapi_sdk::{Client, ClientBuilder};
use rust_decimal::Decimal;

use super::BatchOptions;
use super::plan::Plan;
use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use crate::prompt;

/// The client a batch runs with (the account's prices known, `--max-custo` as its spend cap) and
/// the price of one lookup.
#[derive(Debug)]
pub(crate) struct Approved {
    /// The client.
    pub(crate) client: Client,
    /// The price of one charged lookup of this batch, BRL.
    pub(crate) preco: Decimal,
}

/// Shows the plan's cost and asks; `None` when there is nothing to send.
///
/// # Errors
/// No terminal without `--sim` (2, nothing sent); a refusal (1); the balance request's errors.
pub(crate) async fn approve(
    ctx: &mut Context,
    op: &BatchOptions,
    plan: &Plan,
    base: ClientBuilder,
) -> Result<Option<Approved>> {
    if plan.pending.is_empty() {
        return Ok(None);
    }
    let s = base.clone().build()?.saldo().await?;
    let preco = op.kind.preco(&s.precos);
    let chargeable = plan
        .pending
        .iter()
        .filter(|k| !op.kind.is_sandbox(k))
        .count();
    let maximum = preco * Decimal::from(chargeable);
    let mut text = format!(
        "Lote: {} consulta(s) {} a {} cada; custo máximo {}; saldo {}",
        plan.pending.len(),
        op.kind.name(),
        brl::format(preco),
        brl::format(maximum),
        brl::format(s.saldo_reais)
    );
    if let Some(m) = op.max_cost {
        text.push_str(&format!("; limite --max-custo {}", brl::format(m)));
    }
    ctx.shell.note(format!("{text}."));
    if maximum > s.saldo_reais && !preco.is_zero() {
        let fits = (s.saldo_reais / preco).floor();
        ctx.shell.warn(format!(
            "o saldo cobre cerca de {fits} consulta(s); o lote para quando o saldo acabar (recarga: carapi recarga criar 500)"
        ));
    }
    confirm(ctx, op.yes)?;
    let mut b = base.precos(s.precos);
    if let Some(m) = op.max_cost {
        b = b.max_spend(m);
    }
    Ok(Some(Approved {
        client: b.build()?,
        preco,
    }))
}

fn confirm(ctx: &mut Context, yes: bool) -> Result<()> {
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
    if prompt::confirm("Continuar?")? {
        Ok(())
    } else {
        Err(CliError::other(
            "CANCELADO",
            "lote cancelado; nada foi enviado",
        ))
    }
}
