//! `carapi saldo`: balance, effective prices, limits, usage today and this month (free).

use crate::context::Context;
use crate::error::Result;
use crate::format::{Campos, Celula};
use crate::options::FormatArgs;
use crate::output::Formato;

/// Arguments of `carapi saldo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub formato: FormatArgs,
}

/// Runs `carapi saldo`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let formato = ctx.formato(args.formato);
    let s = ctx.client().await?.saldo().await?;
    if formato == Formato::Json {
        return Ok(ctx.shell.json(&s)?);
    }
    let mut c = Campos::new();
    c.add("saldoReais", "Saldo", Celula::dinheiro(s.saldo_reais))
        .add(
            "precoCarBasico",
            "Preço: CAR básico",
            Celula::dinheiro(s.precos.car_basico),
        )
        .add(
            "precoCarCompleto",
            "Preço: CAR completo",
            Celula::dinheiro(s.precos.car_completo),
        )
        .add(
            "precoProprietario",
            "Preço: proprietário",
            Celula::dinheiro(s.precos.proprietario),
        )
        .add(
            "precoRecibo",
            "Preço: recibo",
            Celula::dinheiro(s.precos.recibo),
        )
        .add(
            "limiteDiarioRequisicoes",
            "Limite diário (requisições)",
            match s.limite_diario_requisicoes {
                Some(n) => Celula::inteiro(n),
                None => Celula {
                    humano: "sem limite".into(),
                    bruto: String::new(),
                },
            },
        )
        .add(
            "limiteMensalReais",
            "Limite mensal",
            Celula::dinheiro_opcional(s.limite_mensal_reais, "sem limite"),
        )
        .add(
            "usoHojeRequisicoes",
            "Hoje: requisições",
            Celula::inteiro(s.uso_hoje.requisicoes),
        )
        .add(
            "usoHojeGasto",
            "Hoje: gasto",
            Celula::dinheiro(s.uso_hoje.gasto),
        )
        .add(
            "usoHojeErros",
            "Hoje: erros",
            Celula::inteiro(s.uso_hoje.erros),
        )
        .add(
            "usoMesRequisicoes",
            "Mês: requisições",
            Celula::inteiro(s.uso_mes.requisicoes),
        )
        .add(
            "usoMesGasto",
            "Mês: gasto",
            Celula::dinheiro(s.uso_mes.gasto),
        );
    Ok(ctx.shell.campos(&c, formato)?)
}
