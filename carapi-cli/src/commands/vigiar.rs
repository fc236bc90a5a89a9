//! `carapi vigiar ARQUIVO --teto V`: watches a list of CAR codes through the archive of paid
//! answers; the engine is [`crate::vigiar`], the report [`crate::vigiar::report`]. Exit
//! [`crate::error::EXIT_CHANGED`] when something changed, [`crate::error::EXIT_CEILING`] when
//! the ceiling left due codes unchecked (for cron).

use std::path::PathBuf;

use carapi_sdk::archive::{ArchivePolicy, Freshness};
use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, EXIT_CEILING, EXIT_CHANGED, Kind, Result};
use crate::options::{ArchiveArgs, FormatArgs};
use crate::vigiar::{self, Outcome, Verdict, Watch, WatchKind, report};
use carapi_sdk::domain::brl::parse_reais;

/// Text appended to `carapi vigiar --help`.
const HELP: &str = concat!(
    "\
Entrada: como a do `carapi lote` (um código por linha, ou CSV com a coluna cod_imovel das
exportações do SICAR, ou a indicada em --coluna). Exige o acervo configurado
(carapi config definir acervo padrao), a finalidade e a base legal.
Só compra de novo os códigos cuja resposta no acervo passou de --idade-maxima (padrão ",
    crate::options::default_max_age!(),
    "), em
ordem, até o --teto; os que nunca foram arquivados são comprados e aparecem como novos.
situacao: mudou | igual | novo | recente (no acervo, não comprado) | nao_comprado (teto) |
nao_encontrado (404: saiu do cadastro, se estava no acervo) | erro.
Código de saída 10: algum imóvel mudou (ou saiu do cadastro) desde a resposta arquivada;
11: nada mudou no que foi verificado, mas o teto deixou códigos vencidos sem verificar (o
stderr diz quantos; 10 tem precedência); 0: tudo verificado, nada mudou; os códigos de erro
são os de sempre (carapi --help)."
);

/// Arguments of `carapi vigiar`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub(crate) struct Args {
    /// Arquivo com os códigos CAR (`-` para o stdin): um por linha, ou CSV (exportação do SICAR)
    #[arg(id = "arquivo", value_name = "ARQUIVO")]
    file: PathBuf,
    /// Coluna do CSV com os códigos: nome do cabeçalho ou número (a partir de 1)
    #[arg(long = "coluna", value_name = "NOME|N")]
    column: Option<String>,
    /// Gasto máximo desta execução em reais: as compras param antes de ultrapassá-lo
    #[arg(long = "teto", value_name = "V", value_parser = parse_reais)]
    ceiling: Decimal,
    /// Consulta comparada: completo (com proprietários) ou car (dados básicos)
    #[arg(
        long = "tipo",
        value_enum,
        default_value = "completo",
        value_name = "TIPO"
    )]
    kind: WatchKind,
    /// `-o/--formato` given after the subcommand.
    #[command(flatten)]
    format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    archive: ArchiveArgs,
}

/// Runs `carapi vigiar`.
///
/// # Errors
/// No archive configured, purpose or legal basis missing (2); unreadable input (1); stopped on
/// 401 (3), 402 (5), 429 (6); codes left with network or server errors (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    if args.ceiling.is_sign_negative() {
        return Err(CliError::usage("--teto não pode ser negativo").hint("--teto 50"));
    }
    let (base, archived) = ctx.consulta_builder(&args.archive).await?;
    let Some((archive, policy)) = archived else {
        return Err(CliError::new(
            Kind::Usage,
            "SEM_ACERVO",
            "carapi vigiar compara com o acervo, e nenhum acervo está configurado",
        )
        .hint("carapi config definir acervo padrao (ou um caminho de arquivo)"));
    };
    let batch = args.kind.batch();
    let input = crate::batch::plan::read_input(ctx, &args.file, batch, args.column.as_deref())?;
    let s = base.clone().build()?.saldo().await?;
    ctx.remember_prices(&s.precos);
    // Every purchase is decided by the engine (a lookup of a stale entry must buy, whatever
    // the client's own clock says): the client never reuses, and its cap is the ceiling.
    let never = ArchivePolicy::new(policy.purpose.clone(), policy.legal_basis, Freshness::Never);
    let client = base
        .archive(archive.clone(), never)
        .precos(s.precos)
        .max_spend(args.ceiling)
        .build()?;
    let w = Watch {
        kind: args.kind,
        codes: input.distinct,
        archive,
        freshness: policy.freshness,
        now: crate::test_hook::now(),
        ceiling: args.ceiling,
        preco: batch.preco(&s.precos),
    };
    let watched = vigiar::watch(ctx, &client, w).await?;
    report::print(ctx, &watched.outcomes, format)?;
    report::summary(ctx, &watched.outcomes, client.gasto().confirmado);
    if watched.over_ceiling > 0 {
        ctx.shell.warn(format!(
            "teto de {} atingido: {} código(s) vencido(s) não comprado(s) nem verificado(s) (a próxima execução os compra)",
            carapi_sdk::domain::brl::format(args.ceiling),
            watched.over_ceiling
        ));
    }
    if let Some(stop) = watched.stop {
        return Err(stop);
    }
    let errors = watched
        .outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Failed)
        .count();
    if errors > 0 {
        return Err(CliError::new(
            Kind::Network,
            "VIGIAR_INCOMPLETO",
            format!("{errors} código(s) com erro de rede ou do servidor"),
        )
        .hint("rode de novo: só o que continua vencido é comprado"));
    }
    ctx.success_exit = if watched.outcomes.iter().any(Outcome::changed) {
        Some(EXIT_CHANGED)
    } else if watched.over_ceiling > 0 {
        Some(EXIT_CEILING)
    } else {
        None
    };
    Ok(())
}
