//! The end of a batch: the summary line on stderr and the exit, with how to resume.

use carapi_sdk::domain::brl;

use super::registro::Anteriores;
use super::rodar::{Fim, Parada};
use super::{MAX_ERROS_SEGUIDOS, Opcoes};
use crate::context::Context;
use crate::error::{CliError, Kind, Result};

pub use super::registro::Resumo;

/// The summary line: the whole batch's totals (this run plus what `--saida` already held).
pub fn linha(r: &Resumo, antes: &Anteriores) -> String {
    let retomado = antes.encontrados + antes.nao_encontrados > 0;
    let mut l = format!(
        "Resumo{}: {} encontrado(s), {} não encontrado(s), {} inválido(s), {} erro(s)",
        if retomado {
            " do lote (com as execuções anteriores)"
        } else {
            ""
        },
        r.encontrados + antes.encontrados,
        r.nao_encontrados + antes.nao_encontrados,
        r.invalidos,
        r.erros
    );
    if r.nao_enviados > 0 {
        l.push_str(&format!(", {} não enviado(s)", r.nao_enviados));
    }
    if retomado {
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
pub fn encerrar(
    ctx: &mut Context,
    op: &Opcoes,
    resumo: &Resumo,
    antes: &Anteriores,
    fim: Fim,
) -> Result<()> {
    ctx.shell.note(linha(resumo, antes));
    let retomar = match &op.saida {
        Some(p) => format!(
            "rode o mesmo comando (mesmo --saida {}) para continuar de onde parou",
            p.display()
        ),
        None => "use --saida ARQUIVO para poder retomar um lote".to_owned(),
    };
    if fim.interrompido {
        return Err(CliError::interrupted(retomar));
    }
    match fim.parada {
        Some(Parada::Api(e)) => {
            let hint = match e.kind {
                Kind::Balance => format!("faça uma recarga (carapi recarga criar 500) e {retomar}"),
                _ => format!("{}; depois {retomar}", e.hint.clone().unwrap_or_default()),
            };
            Err(CliError {
                message: format!("lote interrompido: {}", e.message),
                hint: Some(hint),
                ..e
            })
        }
        Some(Parada::MaxCusto(m)) => Err(CliError::other(
            "CUSTO_MAXIMO",
            format!("lote parado pelo --max-custo: {m}"),
        )
        .hint(format!("aumente --max-custo e {retomar}"))),
        Some(Parada::Rede) => Err(CliError::new(
            Kind::Network,
            "REDE",
            format!("lote interrompido após {MAX_ERROS_SEGUIDOS} erros de rede/servidor seguidos"),
        )
        .hint(format!("verifique a conexão e {retomar}"))),
        None if resumo.erros > 0 => Err(CliError::new(
            Kind::Network,
            "ERROS_NO_LOTE",
            format!("{} chave(s) ficaram com erro", resumo.erros),
        )
        .hint(retomar.replace("continuar de onde parou", "tentar de novo só essas"))),
        None => Ok(()),
    }
}
