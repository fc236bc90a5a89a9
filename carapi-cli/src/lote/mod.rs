//! Batches (`carapi lote`): read keys from a file, confirm the cost, look them up at the SDK's
//! rate limit, write each answer as it arrives, resume without paying twice.
//!
//! The four stages, each in its module: [`plan`] (input, dedup, resume), [`cost`] (preview,
//! confirm), [`run`] (the lookups) and [`summary`] (summary and exit).
//!
//! 1. The input (a file, or stdin with `-`) is parsed by [`input`]: one key per line or one CSV
//!    column (`--coluna`, a known name such as `cod_imovel`, or the first), normalised,
//!    duplicates dropped, invalid keys reported (stderr) and never sent; no valid key is an error.
//! 2. With `--saida FILE`, keys already answered in `FILE` (found or not found, see [`output`]) are
//!    skipped. For `recibo`, PDFs are saved **in the directory of `--saida`** (the current
//!    directory without it) as `<codigoCar>.pdf`; a key whose PDF is already there is recorded
//!    as found without a request, so a crash between saving the PDF and writing its line never
//!    costs a second receipt. Keys a killed run had sent without writing their answer are
//!    checked against the free history (see [`journal`]): a charged one is not bought again.
//! 3. Before spending: how many lookups, the maximum cost at the account's effective prices
//!    (`saldo().precos`; sandbox keys are free), the balance, and `--max-custo`; then a prompt
//!    (`--sim` skips it; with no terminal and no `--sim` the batch is refused, nothing sent).
//! 4. Lookups run [`CONCURRENCY`] at a time through one SDK client (its rate limiter keeps the
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

pub(crate) mod columns;
pub(crate) mod cost;
pub(crate) mod export;
pub(crate) mod input;
pub(crate) mod journal;
pub(crate) mod kind;
pub(crate) mod output;
pub(crate) mod plan;
pub(crate) mod record;
pub(crate) mod run;
pub(crate) mod summary;

use std::path::PathBuf;
use std::sync::Arc;

use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, Result};
pub(crate) use kind::BatchKind;
use output::{BatchStatus, Record, RecordWriter};
pub(crate) use summary::Summary;

/// Lookups in flight at once (the SDK's rate limiter spaces them).
pub(crate) const CONCURRENCY: usize = 4;

/// Network/server errors in a row that stop a batch.
pub(crate) const MAX_ERRORS_IN_A_ROW: usize = 10;

/// Text appended to `carapi lote --help`.
pub(crate) const HELP: &str = "\
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
pub(crate) struct BatchOptions {
    /// Lookup kind.
    pub(crate) kind: BatchKind,
    /// Input file, or `-` for stdin.
    pub(crate) file: PathBuf,
    /// The CSV column holding the keys: a header name or a 1-based number.
    pub(crate) column: Option<String>,
    /// Output file (resumable), or stdout.
    pub(crate) output: Option<PathBuf>,
    /// Skip the confirmation.
    pub(crate) yes: bool,
    /// Spend cap, BRL.
    pub(crate) max_cost: Option<Decimal>,
    /// Without `--saida`: CSV on stdout instead of JSON Lines.
    pub(crate) csv_no_stdout: bool,
    /// The archive flags (`--finalidade`, `--base-legal`, `--idade-maxima`, `--comprar`).
    pub(crate) archive: crate::options::ArchiveArgs,
}

/// Runs a batch (see the module documentation): plan, cost, run, summary.
///
/// # Errors
/// Unreadable input (1) or no valid key (2); refused confirmation (1) or no terminal without
/// `--sim` (2); stopped on 402 (5), 401 (3), 429 (6), `--max-custo` (1), network (7); keys left
/// with errors (7); Ctrl-C (130).
pub(crate) async fn execute(ctx: &mut Context, op: BatchOptions) -> Result<()> {
    let (base, archive) = ctx.lookup_builder(&op.archive).await?;
    let plan = plan::make_plan(ctx, &op, &base).await?;
    let mut summary = Summary {
        invalid: plan.input.invalid.len(),
        ..Summary::default()
    };
    // Nothing is sent (nor any file created) before this.
    let approved = cost::approve(ctx, &op, &plan, base, archive.as_ref()).await?;

    // Output (the progress bar first: the writer may borrow stdout from the shell).
    let pb = ctx
        .shell
        .progress(0, "{spinner} [{bar:25}] {pos}/{len} {por_seg} ETA {eta}");
    let (w, fresh): (Box<dyn std::io::Write + '_>, bool) = match &op.output {
        Some(p) => {
            let r = export::records_file(p, plan.format);
            let (f, fresh, _) =
                output::open(&r, plan.format).map_err(|e| CliError::io_at(&r, e))?;
            (Box::new(f), fresh)
        }
        None => (Box::new(ctx.shell.out()), true),
    };
    // The origin columns with the archive; a CSV resumed keeps its header's choice.
    let origin = match plan.previous.origin_columns {
        Some(b) if plan.format == output::FileFormat::Csv && !fresh => b,
        _ => archive.is_some(),
    };
    let mut writer =
        RecordWriter::new(w, plan.format, op.kind, fresh, op.output.is_some(), origin)?;
    record_without_lookup(&plan, &mut writer, &mut summary)?;
    let journal = match (&plan.journal, &approved) {
        (Some(dp), Some(_)) => Some(Arc::new(
            journal::Journal::open(dp.clone()).map_err(|e| CliError::io_at(dp, e))?,
        )),
        _ => None,
    };
    let end = match approved {
        Some(a) => {
            let ex = run::RunSetup {
                client: a.client,
                journal: journal.clone(),
                kind: op.kind,
                preco: a.preco,
                pending: plan.pending.clone(),
                pdf_dir: plan.pdf_dir.clone(),
            };
            run::run_lookups(ex, &mut writer, &mut summary, pb).await?
        }
        None => run::RunEnd::default(),
    };
    drop(writer);
    if let Some(d) = journal.and_then(Arc::into_inner) {
        d.finish();
    }
    if let Some(p) = &op.output {
        write_whole_file(ctx, &op, &plan, &summary, p)?;
        let finished = end.stop.is_none() && !end.interrupted && summary.errors == 0;
        if finished
            && matches!(
                plan.format,
                output::FileFormat::Xlsx | output::FileFormat::Geojson
            )
        {
            // A finished batch leaves no hidden file beside its output; a rerun into it is
            // refused (plano::planejar), so nothing is bought again.
            let _ = std::fs::remove_file(export::records_file(p, plan.format));
        }
    }
    summary::finish(ctx, &op, &summary, &plan.previous, end)
}

/// Writes a `.xlsx` or `.geojson` whole from its records (nothing to do for the other formats,
/// written as the answers arrived).
fn write_whole_file(
    ctx: &mut Context,
    op: &BatchOptions,
    plan: &plan::Plan,
    summary: &Summary,
    p: &std::path::Path,
) -> Result<()> {
    if !matches!(
        plan.format,
        output::FileFormat::Xlsx | output::FileFormat::Geojson
    ) {
        return Ok(());
    }
    let r = export::records_file(p, plan.format);
    let bytes = std::fs::read(&r).map_err(|e| CliError::io_at(&r, e))?;
    let records = export::sort_by_input(output::records_jsonl(&bytes), &plan.input.keys);
    // Answers through the archive say where they came from.
    let origin = records.iter().any(|r| r.origin.is_some());
    if plan.format == output::FileFormat::Xlsx {
        let info = export::SummaryInfo {
            kind: op.kind,
            input: op.file.display().to_string(),
            summary,
            origin,
        };
        export::xlsx(p, &records, &info).map_err(|e| {
            let reason = match &e {
                rust_xlsxwriter::XlsxError::IoError(io) => crate::foreign_errors::io(io),
                _ => "falha ao gerar a planilha".to_owned(),
            };
            tracing::debug!("xlsx: {e}");
            CliError::other("XLSX", format!("{}: {reason}", p.display()))
        })?;
    } else {
        std::fs::write(p, export::geojson(op.kind, &records, origin))
            .map_err(|e| CliError::io_at(p, e))?;
    }
    ctx.shell.note(format!(
        "{} registro(s) gravado(s) em {}.",
        records.len(),
        p.display()
    ));
    Ok(())
}

/// Records the keys answered without a request: receipts already on disk, and keys a killed run
/// paid for.
fn record_without_lookup(
    plan: &plan::Plan,
    writer: &mut RecordWriter<'_>,
    summary: &mut Summary,
) -> Result<()> {
    for k in &plan.existing_pdfs {
        let file = plan.pdf_dir.join(format!("{k}.pdf")).display().to_string();
        writer.append(&Record {
            key: k.clone(),
            status: BatchStatus::Found,
            http_status: None,
            error_code: None,
            message: Some("PDF já existia; não consultado de novo".into()),
            cobrado: false,
            file: Some(file),
            response: None,
            origin: None,
            comprado_em: None,
        })?;
        summary.found += 1;
    }
    for k in &plan.recovered {
        writer.append(&Record {
            key: k.clone(),
            status: BatchStatus::Found,
            http_status: Some(200),
            error_code: None,
            message: Some("cobrada numa execução interrompida; resposta não gravada".into()),
            cobrado: true,
            file: None,
            response: None,
            origin: None,
            comprado_em: None,
        })?;
        summary.found += 1;
    }
    Ok(())
}
