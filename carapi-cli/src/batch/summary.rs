//! The end of a batch: the summary line on stderr and the exit, with how to resume.

use carapi_sdk::domain::brl;

use super::record::Previous;
use super::run::{RunEnd, Stop};
use super::{BatchOptions, MAX_ERRORS_IN_A_ROW};
use crate::context::Context;
use crate::error::{CliError, Kind, Result};

pub(crate) use super::record::Summary;

/// The summary line: the whole batch's totals (this run plus what `--saida` already held).
pub(crate) fn line(r: &Summary, before: &Previous) -> String {
    let resumed = before.found + before.not_found > 0;
    let mut l = format!(
        "Resumo{}: {} encontrado(s), {} não encontrado(s), {} inválido(s), {} erro(s)",
        if resumed {
            " do lote (com as execuções anteriores)"
        } else {
            ""
        },
        r.found + before.found,
        r.not_found + before.not_found,
        r.invalid,
        r.errors
    );
    if r.not_sent > 0 {
        l.push_str(&format!(", {} não enviado(s)", r.not_sent));
    }
    if resumed {
        l.push_str(&format!(
            "; cobrado nesta execução {}.",
            brl::format(r.cobrado)
        ));
    } else {
        l.push_str(&format!("; total cobrado {}.", brl::format(r.cobrado)));
    }
    l
}

/// Prints the summary and turns the way the run ended into the exit.
///
/// # Errors
/// Ctrl-C (130); stopped on 402 (5), 401 (3), 429 (6), `--max-custo` (1), network (7); keys left
/// with errors (7).
pub(crate) fn finish(
    ctx: &mut Context,
    op: &BatchOptions,
    summary: &Summary,
    before: &Previous,
    end: RunEnd,
) -> Result<()> {
    ctx.shell.note(line(summary, before));
    let resume_hint = match &op.output {
        Some(p) => format!(
            "rode o mesmo comando (mesmo --saida {}) para continuar de onde parou",
            p.display()
        ),
        None => "use --saida ARQUIVO para poder retomar um lote".to_owned(),
    };
    if end.interrupted {
        return Err(CliError::interrupted(resume_hint));
    }
    match end.stop {
        Some(Stop::Api(e)) => {
            let hint = match e.kind {
                Kind::Balance => {
                    format!("faça uma recarga (carapi recarga criar 500) e {resume_hint}")
                }
                _ => format!(
                    "{}; depois {resume_hint}",
                    e.hint.clone().unwrap_or_default()
                ),
            };
            Err(CliError {
                message: format!("lote interrompido: {}", e.message),
                hint: Some(hint),
                ..e
            })
        }
        Some(Stop::MaxCost(m)) => Err(CliError::other(
            "CUSTO_MAXIMO",
            format!("lote parado pelo --max-custo: {m}"),
        )
        .hint(format!("aumente --max-custo e {resume_hint}"))),
        Some(Stop::Network) => Err(CliError::new(
            Kind::Network,
            "REDE",
            format!("lote interrompido após {MAX_ERRORS_IN_A_ROW} erros de rede/servidor seguidos"),
        )
        .hint(format!("verifique a conexão e {resume_hint}"))),
        None if summary.errors > 0 => Err(CliError::new(
            Kind::Network,
            "ERROS_NO_LOTE",
            format!("{} chave(s) ficaram com erro", summary.errors),
        )
        .hint(resume_hint.replace("continuar de onde parou", "tentar de novo só essas"))),
        None => Ok(()),
    }
}
