//! The cost of a batch, before anything is sent: how many lookups, the maximum at the account's
//! effective prices (`saldo().precos`; sandbox keys are free), the balance and `--max-custo`;
//! then the confirmation (`--sim` skips it; with no terminal and no `--sim` nothing is sent).

use carapi_sdk::archive::{Archive, ArchivePolicy};
use carapi_sdk::domain::brl;
use carapi_sdk::{Client, ClientBuilder, CodigoCar, CpfCnpj};
use rust_decimal::Decimal;

use super::plan::Plan;
use super::{BatchKind, BatchOptions};
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
    archive: Option<&(Archive, ArchivePolicy)>,
) -> Result<Option<Approved>> {
    if plan.pending.is_empty() {
        return Ok(None);
    }
    let s = base.clone().build()?.saldo().await?;
    ctx.remember_prices(&s.precos);
    let preco = op.kind.preco(&s.precos);
    let chargeable: Vec<&String> = plan
        .pending
        .iter()
        .filter(|k| !op.kind.is_sandbox(k))
        .collect();
    let archived = match archive {
        Some((a, p)) => in_archive(a, p, op.kind, &chargeable)?,
        None => 0,
    };
    let to_buy = chargeable.len() - archived;
    let maximum = preco * Decimal::from(to_buy);
    if archive.is_some() {
        ctx.shell.note(format!(
            "{} códigos: {} no acervo, {} a comprar: {}",
            thousands(plan.pending.len()),
            thousands(archived),
            thousands(to_buy),
            brl::format(maximum)
        ));
    }
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

/// How many of `chaves` the archive answers now under `policy` (free).
///
/// # Errors
/// An archive that cannot be read (1).
fn in_archive(
    archive: &Archive,
    policy: &ArchivePolicy,
    kind: BatchKind,
    chaves: &[&String],
) -> Result<usize> {
    let operation = kind.endpoint();
    let now = chrono::Utc::now();
    let mut n = 0;
    for k in chaves {
        let chave = match kind {
            BatchKind::Proprietario => CpfCnpj::parse(k).map(|d| d.as_str().to_owned()),
            _ => CodigoCar::parse(k).map(|c| c.as_str().to_owned()),
        }
        .unwrap_or_else(|_| (*k).clone());
        let entry = archive
            .latest_entry(operation, &chave)
            .map_err(|e| CliError::other("ACERVO", carapi_sdk::error_chain(&e)))?;
        if entry
            .is_some_and(|e| carapi_sdk::archive::Archive::is_fresh_at(&e, policy.freshness, now))
        {
            n += 1;
        }
    }
    Ok(n)
}

/// `3.000`: thousands separated by dots, as Brazilians write counts.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
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

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_dotted() {
        assert_eq!(super::thousands(3000), "3.000");
        assert_eq!(super::thousands(588), "588");
        assert_eq!(super::thousands(1_234_567), "1.234.567");
    }
}
