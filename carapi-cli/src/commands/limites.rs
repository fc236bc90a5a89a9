//! `carapi limites` and `carapi limites definir [--diario N|none] [--mensal VALOR|none]` (free).

use carapi_sdk::{LimitesResponse, LimitesUpdate};
use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, Result};
use crate::format::{CellValue, Fields};
use crate::options::FormatArgs;
use crate::output::OutputFormat;
use carapi_sdk::domain::brl::parse_reais;

/// Arguments of `carapi limites`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Option<Sub>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

/// Subcommands of `carapi limites`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Altera os limites (o que não for informado fica como está)
    #[command(name = "definir", alias = "set")]
    Set(SetArgs),
}

/// Arguments of `carapi limites definir`.
#[derive(Debug, clap::Args)]
#[command(
    group = clap::ArgGroup::new("limite").required(true).multiple(true).args(["daily", "monthly"]),
    override_usage = "carapi limites definir [OPÇÕES] --diario N|sem\n     carapi limites definir [OPÇÕES] --mensal VALOR|sem"
)]
pub(crate) struct SetArgs {
    /// Requisições cobradas por dia, de 1 a 100000 (0 ou `sem` = sem limite)
    #[arg(long = "diario", value_name = "N|sem", value_parser = parse_daily, allow_negative_numbers = true)]
    pub(crate) daily: Option<Limite<u32>>,
    /// Gasto mensal máximo em reais, até 1000000 (0 ou `sem` = sem limite)
    #[arg(long = "mensal", value_name = "VALOR|sem", value_parser = parse_monthly, allow_negative_numbers = true)]
    pub(crate) monthly: Option<Limite<Decimal>>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

/// A limit value: a number, or `none` (remove).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limite<T> {
    /// Remove the limit (sent as `null`).
    Remove,
    /// Set it.
    Set(T),
}

impl<T> Limite<T> {
    fn patch(self) -> Option<T> {
        match self {
            Limite::Remove => None,
            Limite::Set(v) => Some(v),
        }
    }
}

fn is_none_word(s: &str) -> bool {
    matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "none" | "nenhum" | "sem"
    )
}

fn parse_daily(s: &str) -> Result<Limite<u32>, String> {
    if is_none_word(s) {
        return Ok(Limite::Remove);
    }
    let n: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("esperado um inteiro ou none, não {s:?}"))?;
    if n > 100_000 {
        return Err("o limite diário vai de 0 a 100000".into());
    }
    Ok(Limite::Set(n))
}

fn parse_monthly(s: &str) -> Result<Limite<Decimal>, String> {
    if is_none_word(s) {
        return Ok(Limite::Remove);
    }
    let v = parse_reais(s).map_err(|e| e.to_string())?;
    if v.is_sign_negative() || v > Decimal::from(1_000_000) {
        return Err("o limite mensal vai de 0 a 1000000".into());
    }
    Ok(Limite::Set(v))
}

/// Runs `carapi limites [set]`.
///
/// # Errors
/// 400 `LIMITE_INVALIDO` (2), 401 (3), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    match args.command {
        None => {
            let format = ctx.format(args.format);
            let r = ctx.client().await?.limites().await?;
            show(ctx, &r, format, false)
        }
        Some(Sub::Set(set)) => {
            let format = ctx.format(set.format);
            let update = LimitesUpdate {
                limite_diario_requisicoes: set.daily.map(Limite::patch),
                limite_mensal_reais: set.monthly.map(Limite::patch),
            };
            if update == LimitesUpdate::default() {
                return Err(CliError::usage("informe --diario ou --mensal"));
            }
            let r = ctx.client().await?.atualizar_limites(&update).await?;
            show(ctx, &r, format, true)
        }
    }
}

fn show(ctx: &mut Context, r: &LimitesResponse, format: OutputFormat, changed: bool) -> Result<()> {
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(r)?);
    }
    if changed {
        ctx.shell.note(&r.message);
    }
    let mut c = Fields::new();
    c.add(
        "limiteDiarioRequisicoes",
        "Limite diário (requisições)",
        match r.limite_diario_requisicoes {
            Some(n) => CellValue::integer(n),
            None => CellValue {
                human: "sem limite".into(),
                raw: String::new(),
            },
        },
    )
    .add(
        "limiteMensalReais",
        "Limite mensal",
        CellValue::optional_money(r.limite_mensal_reais, "sem limite"),
    );
    Ok(ctx.shell.fields(&c, format)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_values() {
        assert_eq!(parse_daily("none").unwrap(), Limite::Remove);
        assert_eq!(parse_daily("50").unwrap(), Limite::Set(50));
        assert!(parse_daily("100001").is_err());
        assert_eq!(
            parse_monthly("250,50").unwrap(),
            Limite::Set(Decimal::new(25050, 2))
        );
        assert!(parse_monthly("-1").is_err());
    }
}
