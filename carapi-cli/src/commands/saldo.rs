//! `carapi saldo`: balance, effective prices, limits, usage today and this month (free).

use crate::context::Context;
use crate::error::Result;
use crate::format::{CellValue, Fields};
use crate::options::FormatOnly;

/// Arguments of `carapi saldo`: `-o/--formato` only.
pub(crate) type Args = FormatOnly;

/// Runs `carapi saldo`.
///
/// # Errors
/// 401 (3), 429 (6), network (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    let answer = ctx.client().await?.saldo().await?;
    ctx.remember_prices(&answer.precos);
    let Some(s) = ctx.free_answer(format, answer)? else {
        return Ok(());
    };
    let mut c = Fields::new();
    c.add("saldoReais", "Saldo", CellValue::money(s.saldo_reais))
        .add(
            "precoCarBasico",
            "Preço: CAR básico",
            CellValue::money(s.precos.car_basico),
        )
        .add(
            "precoCarCompleto",
            "Preço: CAR completo",
            CellValue::money(s.precos.car_completo),
        )
        .add(
            "precoProprietario",
            "Preço: proprietário",
            CellValue::money(s.precos.proprietario),
        )
        .add(
            "precoRecibo",
            "Preço: recibo",
            CellValue::money(s.precos.recibo),
        )
        .add(
            "limiteDiarioRequisicoes",
            "Limite diário (requisições)",
            match s.limite_diario_requisicoes {
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
            CellValue::optional_money(s.limite_mensal_reais, "sem limite"),
        )
        .add(
            "usoHojeRequisicoes",
            "Hoje: requisições",
            CellValue::integer(s.uso_hoje.requisicoes),
        )
        .add(
            "usoHojeGasto",
            "Hoje: gasto",
            CellValue::money(s.uso_hoje.gasto),
        )
        .add(
            "usoHojeErros",
            "Hoje: erros",
            CellValue::integer(s.uso_hoje.erros),
        )
        .add(
            "usoMesRequisicoes",
            "Mês: requisições",
            CellValue::integer(s.uso_mes.requisicoes),
        )
        .add(
            "usoMesGasto",
            "Mês: gasto",
            CellValue::money(s.uso_mes.gasto),
        );
    Ok(ctx.shell.fields(&c, format)?)
}
