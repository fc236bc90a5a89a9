//! Batches (`carapi lote`): read keys from a file, confirm the cost, look them up at the SDK's
//! rate limit, write each answer as it arrives, resume without paying twice.
//!
//! The four stages, each in its module: [`plano`] (input, dedup, resume), [`custo`] (preview,
//! confirm), [`rodar`] (the lookups) and [`resumo`] (summary and exit).
//!
//! 1. The input (a file, or stdin with `-`) is parsed by [`entrada`]: one key per line or one CSV
//!    column (`--coluna`, a known name such as `cod_imovel`, or the first), normalised,
//!    duplicates dropped, invalid keys reported (stderr) and never sent; no valid key is an error.
//! 2. With `--saida FILE`, keys already answered in `FILE` (found or not found, see [`saida`]) are
//!    skipped. For `recibo`, PDFs are saved **in the directory of `--saida`** (the current
//!    directory without it) as `<codigoCar>.pdf`; a key whose PDF is already there is recorded
//!    as found without a request, so a crash between saving the PDF and writing its line never
//!    costs a second receipt. Keys a killed run had sent without writing their answer are
//!    checked against the free history (see [`diario`]): a charged one is not bought again.
//! 3. Before spending: how many lookups, the maximum cost at the account's effective prices
//!    (`saldo().precos`; sandbox keys are free), the balance, and `--max-custo`; then a prompt
//!    (`--sim` skips it; with no terminal and no `--sim` the batch is refused, nothing sent).
//! 4. Lookups run [`CONCORRENCIA`] at a time through one SDK client (its rate limiter keeps the
//!    contract's 10 requests/s; `--max-custo` is the SDK's `max_spend` guard), with a progress
//!    bar and ETA on stderr. Each answer is appended and flushed at once, in input order.
//! 5. The batch stops (in-flight lookups finish and are written) on 402 (says how to top up),
//!    401, 429 (daily/monthly limit), the `--max-custo` cap, 10 network/server errors in a row, or
//!    Ctrl-C (exit 130; a second Ctrl-C quits at once). Rerunning the same command resumes.
//! 6. Summary on stderr: found, not found (both counting what `--saida` already held), invalid,
//!    errors, not sent, charged.
//!
//! Without `--saida`, results go to stdout (JSON Lines, or CSV with `-o csv`) and nothing can be
//! resumed.

#[path = "columns.rs"]
pub mod campos;
#[path = "cost.rs"]
pub mod custo;
#[path = "journal.rs"]
pub mod diario;
#[path = "input.rs"]
pub mod entrada;
#[path = "export.rs"]
pub mod exportar;
#[path = "plan.rs"]
pub mod plano;
#[path = "record.rs"]
pub mod registro;
#[path = "summary.rs"]
pub mod resumo;
#[path = "run.rs"]
pub mod rodar;
#[path = "output.rs"]
pub mod saida;
#[path = "kind.rs"]
pub mod tipo;

use std::path::PathBuf;
use std::sync::Arc;

use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, Result};
pub use resumo::Resumo;
use saida::{Escritor, Resultado, StatusLote};
pub use tipo::TipoLote;

/// Lookups in flight at once (the SDK's rate limiter spaces them).
pub const CONCORRENCIA: usize = 4;

/// Network/server errors in a row that stop a batch.
pub const MAX_ERROS_SEGUIDOS: usize = 10;

/// Text appended to `carapi lote --help`.
pub const AJUDA: &str = "\
Entrada: um arquivo, ou - para o stdin; uma chave por linha, ou um CSV (`,` ou `;`) com a coluna
cod_imovel (exportações do SICAR), codigo_car, cpf, cnpj ou cpf_cnpj, ou a indicada em --coluna.
Saída (--saida): JSON Lines, uma linha por chave (campos chave, status, httpStatus, cobrado,
resposta, ...), ou CSV se o nome terminar em .csv (colunas chave, status, httpStatus, codigoErro,
mensagem, cobrado, arquivo, e os campos da resposta).
status: encontrado | nao_encontrado (respostas finais, puladas ao retomar) | erro (tentado de novo ao retomar).
Rodar o mesmo comando com o mesmo --saida retoma o lote sem pagar de novo pelo que já foi respondido
(nem pelo que foi cobrado numa execução interrompida: o diário .<saida>.enviando e o histórico dizem quais).
Recibos: os PDFs são gravados no diretório do --saida (ou no atual), como <codigoCar>.pdf;
um PDF já existente não é baixado de novo.";

/// The options of a batch.
#[derive(Debug, Clone)]
pub struct Opcoes {
    /// Lookup kind.
    pub tipo: TipoLote,
    /// Input file, or `-` for stdin.
    pub arquivo: PathBuf,
    /// The CSV column holding the keys: a header name or a 1-based number.
    pub coluna: Option<String>,
    /// Output file (resumable), or stdout.
    pub saida: Option<PathBuf>,
    /// Skip the confirmation.
    pub yes: bool,
    /// Spend cap, BRL.
    pub max_custo: Option<Decimal>,
    /// Without `--saida`: CSV on stdout instead of JSON Lines.
    pub csv_no_stdout: bool,
}

/// Runs a batch (see the module documentation): plan, cost, run, summary.
///
/// # Errors
/// Unreadable input (1) or no valid key (2); refused confirmation (1) or no terminal without
/// `--sim` (2); stopped on 402 (5), 401 (3), 429 (6), `--max-custo` (1), network (7); keys left
/// with errors (7); Ctrl-C (130).
pub async fn executar(ctx: &mut Context, op: Opcoes) -> Result<()> {
    let base = ctx.builder().await?;
    let plano = plano::planejar(ctx, &op, &base).await?;
    let mut resumo = Resumo {
        invalidos: plano.entrada.invalidas.len(),
        ..Resumo::default()
    };
    // Nothing is sent (nor any file created) before this.
    let aprovado = custo::aprovar(ctx, &op, &plano, base).await?;

    // Output (the progress bar first: the writer may borrow stdout from the shell).
    let pb = ctx
        .shell
        .progress(0, "{spinner} [{bar:25}] {pos}/{len} {por_seg} ETA {eta}");
    let (w, novo): (Box<dyn std::io::Write + '_>, bool) = match &op.saida {
        Some(p) => {
            let r = exportar::arquivo_de_registros(p, plano.formato);
            let (f, novo, _) =
                saida::abrir(&r, plano.formato).map_err(|e| CliError::io_at(&r, e))?;
            (Box::new(f), novo)
        }
        None => (Box::new(ctx.shell.out()), true),
    };
    let mut escritor = Escritor::new(w, plano.formato, op.tipo, novo, op.saida.is_some())?;
    registrar_sem_consulta(&plano, &mut escritor, &mut resumo)?;
    let diario = match (&plano.diario, &aprovado) {
        (Some(dp), Some(_)) => Some(Arc::new(
            diario::Diario::abrir(dp.clone()).map_err(|e| CliError::io_at(dp, e))?,
        )),
        _ => None,
    };
    let fim = match aprovado {
        Some(a) => {
            let ex = rodar::Execucao {
                client: a.client,
                diario: diario.clone(),
                tipo: op.tipo,
                preco: a.preco,
                pendentes: plano.pendentes.clone(),
                pdf_dir: plano.pdf_dir.clone(),
            };
            rodar::rodar(ex, &mut escritor, &mut resumo, pb).await?
        }
        None => rodar::Fim::default(),
    };
    drop(escritor);
    if let Some(d) = diario.and_then(Arc::into_inner) {
        d.concluir();
    }
    if let Some(p) = &op.saida {
        gerar_arquivo(ctx, &op, &plano, &resumo, p)?;
        let completo = fim.parada.is_none() && !fim.interrompido && resumo.erros == 0;
        if completo
            && matches!(
                plano.formato,
                saida::FormatoSaida::Xlsx | saida::FormatoSaida::Geojson
            )
        {
            // A finished batch leaves no hidden file beside its output; a rerun into it is
            // refused (plano::planejar), so nothing is bought again.
            let _ = std::fs::remove_file(exportar::arquivo_de_registros(p, plano.formato));
        }
    }
    resumo::encerrar(ctx, &op, &resumo, &plano.anteriores, fim)
}

/// Writes a `.xlsx` or `.geojson` whole from its records (nothing to do for the other formats,
/// written as the answers arrived).
fn gerar_arquivo(
    ctx: &mut Context,
    op: &Opcoes,
    plano: &plano::Plano,
    resumo: &Resumo,
    p: &std::path::Path,
) -> Result<()> {
    if !matches!(
        plano.formato,
        saida::FormatoSaida::Xlsx | saida::FormatoSaida::Geojson
    ) {
        return Ok(());
    }
    let r = exportar::arquivo_de_registros(p, plano.formato);
    let bytes = std::fs::read(&r).map_err(|e| CliError::io_at(&r, e))?;
    let registros = exportar::ordenar(saida::registros_jsonl(&bytes), &plano.entrada.chaves);
    if plano.formato == saida::FormatoSaida::Xlsx {
        let info = exportar::InfoResumo {
            tipo: op.tipo,
            entrada: op.arquivo.display().to_string(),
            resumo,
        };
        exportar::xlsx(p, &registros, &info).map_err(|e| {
            let reason = match &e {
                rust_xlsxwriter::XlsxError::IoError(io) => crate::foreign_errors::io(io),
                _ => "falha ao gerar a planilha".to_owned(),
            };
            tracing::debug!("xlsx: {e}");
            CliError::other("XLSX", format!("{}: {reason}", p.display()))
        })?;
    } else {
        std::fs::write(p, exportar::geojson(op.tipo, &registros))
            .map_err(|e| CliError::io_at(p, e))?;
    }
    ctx.shell.note(format!(
        "{} registro(s) gravado(s) em {}.",
        registros.len(),
        p.display()
    ));
    Ok(())
}

/// Records the keys answered without a request: receipts already on disk, and keys a killed run
/// paid for.
fn registrar_sem_consulta(
    plano: &plano::Plano,
    escritor: &mut Escritor<'_>,
    resumo: &mut Resumo,
) -> Result<()> {
    for k in &plano.pdfs_existentes {
        let arquivo = plano.pdf_dir.join(format!("{k}.pdf")).display().to_string();
        escritor.escrever(&Resultado {
            chave: k.clone(),
            status: StatusLote::Encontrado,
            http_status: None,
            codigo_erro: None,
            message: Some("PDF já existia; não consultado de novo".into()),
            cobrado: false,
            arquivo: Some(arquivo),
            resposta: None,
        })?;
        resumo.encontrados += 1;
    }
    for k in &plano.recuperadas {
        escritor.escrever(&Resultado {
            chave: k.clone(),
            status: StatusLote::Encontrado,
            http_status: Some(200),
            codigo_erro: None,
            message: Some("cobrada numa execução interrompida; resposta não gravada".into()),
            cobrado: true,
            arquivo: None,
            resposta: None,
        })?;
        resumo.encontrados += 1;
    }
    Ok(())
}
