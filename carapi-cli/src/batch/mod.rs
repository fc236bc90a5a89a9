//! Batches (`carapi lote`): read keys from a file, confirm the cost, look them up at the SDK's
//! rate limit, write each answer as it arrives, resume without paying twice.
//!
//! The four stages, each in its module: [`plan`] (input, dedup, resume), [`cost`] (preview,
//! confirm), [`run`] (the lookups) and [`summary`] (summary and exit).
//!
//! 1. With `--saida FILE`, the run first takes the output's lock ([`lock`]): a second run on
//!    the same `FILE` is refused at once, naming the first one's process id, before anything
//!    is read or sent.
//! 2. The input (a file, or stdin with `-`) is parsed by [`input`]: one key per line or one CSV
//!    column (`--coluna`, a known name such as `cod_imovel`, or the first), normalised as
//!    people paste keys, a repeated key looked up once, invalid keys reported (stderr) and never
//!    sent; no valid key is an error.
//! 3. With `--saida FILE`, keys already answered in the records (found or not found, see
//!    [`output`]) are skipped. For `recibo`, PDFs are saved **in the directory of `--saida`**
//!    (the current directory without it) as `<codigoCar>.pdf`; a key whose PDF is already there
//!    is recorded as found without a request, so a crash between saving the PDF and writing its
//!    line never costs a second receipt. Keys a killed run had sent without writing their
//!    answer are checked against the free history (see [`journal`]): a charged one is not
//!    bought again.
//! 4. Before spending: how many lookups, the maximum cost at the account's effective prices
//!    (sandbox keys are free), the balance, and `--max-custo`; then a prompt (`--sim` skips it;
//!    with no terminal and no `--sim` the batch is refused, nothing sent).
//! 5. Lookups run [`CONCURRENCY`] at a time through one SDK client (its rate limiter keeps the
//!    contract's 10 requests/s; `--max-custo` is the SDK's `max_spend` guard), with a progress
//!    bar and ETA on stderr. Each answer is appended to the records and flushed at once.
//! 6. The batch stops (in-flight lookups finish and are written) on 402 (says how to top up),
//!    401, 429 (daily/monthly limit), the `--max-custo` cap, 10 network/server errors in a row, or
//!    Ctrl-C (exit 130; a second Ctrl-C quits at once). Rerunning the same command resumes.
//! 7. At the end of every run the records are compacted (one per key, the newest) and a
//!    `.csv`, `.xlsx` or `.geojson` output is written whole from them and the input, one row
//!    per input line ([`export`]); then the summary on stderr: found, not found (both counting
//!    what `--saida` already held), invalid, errors, not sent, charged.
//!
//! Without `--saida`, records go to stdout (JSON Lines, or CSV with `-o csv`/`-o csv-cru`) and
//! nothing can be resumed.
//!
//! # Files beside `--saida FILE` (the protocol the Python package's `lote(saida=...)` shares)
//!
//! | file | what | kept |
//! |---|---|---|
//! | `.FILE.trava` | the run's lock: an exclusive `flock` (`File::try_lock`; Python `fcntl.flock(fd, LOCK_EX \| LOCK_NB)`) held for the whole run, the holder's process id inside (`12345\n`) | always (harmless: only a held lock means a run) |
//! | `FILE` when it is not `.csv`/`.xlsx`/`.geojson` | the records, JSON Lines: the canonical, resumable form ([`output`]) | yes |
//! | `.FILE.registros.jsonl` | the records of a `.csv`/`.xlsx`/`.geojson` output (a rerun of a finished batch re-renders it and buys nothing) | yes |
//! | `.FILE.enviando` | the journal of keys in flight ([`journal`]) | until a run ends normally |
//!
//! A run: takes the lock (or stops); reads the records (the newest record of a key wins;
//! `encontrado` and `nao_encontrado` are final, `erro` is retried) and the journal; appends one
//! record per answer; at its end rewrites the records atomically (temporary file and rename)
//! with one record per key in input order, then writes a rendered output the same way; exits,
//! which releases the lock.

pub(crate) mod columns;
pub(crate) mod cost;
pub(crate) mod export;
pub(crate) mod input;
pub(crate) mod journal;
pub(crate) mod kind;
pub(crate) mod lock;
pub(crate) mod output;
pub(crate) mod plan;
pub(crate) mod record;
pub(crate) mod run;
pub(crate) mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, Result};
pub(crate) use kind::BatchKind;
use output::{BatchStatus, Record, RecordWriter, Stream};
pub(crate) use summary::Summary;

/// Lookups in flight at once (the SDK's rate limiter spaces them).
pub(crate) const CONCURRENCY: usize = 4;

/// Network/server errors in a row that stop a batch.
pub(crate) const MAX_ERRORS_IN_A_ROW: usize = 10;

/// Text appended to `carapi lote --help`.
pub(crate) const HELP: &str = "\
Entrada: um arquivo, ou - para o stdin; uma chave por linha, ou um CSV (`,` ou `;`) com a coluna
cod_imovel (exportações do SICAR), codigo_car, cpf, cnpj ou cpf_cnpj, ou a indicada em --coluna.
Códigos CAR colados com espaços ou travessões no lugar dos hífens, ou sem hífens, são aceitos.
Saída (--saida), pela extensão:
  .jsonl (ou outra): uma linha JSON por chave: chave, status, httpStatus, codigoErro, mensagem,
    cobrado, preco, arquivo, resposta (e origem, compradoEm com o acervo);
  .csv: planilha (;, vírgula decimal, BOM), uma linha por linha da entrada, títulos em português;
  .xlsx: planilha Excel: cabeçalho fixo com filtro, células tipadas, coluna de preço, aba Resumo;
  .geojson: um ponto por imóvel (QGIS); a consulta por proprietário não traz posição.
  Nas planilhas e no mapa: linha, as colunas da própria entrada, repetida (chave já vista,
  consultada uma vez), e as linhas inválidas com o motivo.
status: encontrado | nao_encontrado (respostas finais, puladas ao retomar) | erro (tentado de
novo ao retomar); nas planilhas também invalida e pendente (ainda não consultada).
Rodar o mesmo comando com o mesmo --saida retoma o lote sem pagar de novo pelo que já foi respondido
(nem pelo que foi cobrado numa execução interrompida: o diário .<saida>.enviando e o histórico dizem quais).
Só uma execução por --saida: outra ao mesmo tempo é recusada de imediato (a trava .<saida>.trava).
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
    /// Without `--saida`: what goes to stdout (JSON Lines, or CSV with `-o csv`/`-o csv-cru`).
    pub(crate) stdout: Stream,
    /// The archive flags (`--finalidade`, `--base-legal`, `--idade-maxima`, `--comprar`).
    pub(crate) archive: crate::options::ArchiveArgs,
}

/// Runs a batch (see the module documentation): lock, plan, cost, run, files, summary.
///
/// # Errors
/// Another run on the same `--saida` (1); unreadable input (1) or no valid key (2); refused
/// confirmation (1) or no terminal without `--sim` (2); stopped on 402 (5), 401 (3), 429 (6),
/// `--max-custo` (1), network (7); keys left with errors (7); Ctrl-C (130).
pub(crate) async fn execute(ctx: &mut Context, op: BatchOptions) -> Result<()> {
    // Before anything is read or sent; held until the process ends.
    let _lock = op.output.as_deref().map(lock::acquire).transpose()?;
    let (base, archive) = ctx.consulta_builder(&op.archive).await?;
    let plan = plan::make_plan(ctx, &op, &base).await?;
    let mut summary = Summary {
        invalid: plan.input.invalid.len(),
        ..Summary::default()
    };
    // Nothing is sent (nor any file created) before this.
    let approved = cost::approve(ctx, &op, &plan, base, archive.as_ref()).await?;
    let preco = approved.as_ref().map(|a| a.preco);

    // Output (the progress bar first: the writer may borrow stdout from the shell).
    let pb = ctx
        .shell
        .progress(0, "{spinner} [{bar:25}] {pos}/{len} {por_seg} ETA {eta}");
    let (w, stream): (Box<dyn std::io::Write + '_>, Stream) = match &op.output {
        Some(p) => {
            let r = export::records_file(p, plan.format);
            let f = output::open(&r).map_err(|e| CliError::io_at(&r, e))?;
            (Box::new(f), Stream::Jsonl)
        }
        None => (Box::new(ctx.shell.out()), op.stdout),
    };
    let layout = columns::Layout::records(op.kind, archive.is_some());
    let mut writer = RecordWriter::new(w, stream, layout)?;
    record_without_consulta(&plan, preco, &mut writer, &mut summary)?;
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
            run::run_consultas(ex, &mut writer, &mut summary, pb).await?
        }
        None => run::RunEnd::default(),
    };
    drop(writer);
    if let Some(d) = journal.and_then(Arc::into_inner) {
        d.finish();
    }
    if let Some(p) = &op.output {
        write_files(ctx, &op, &plan, &summary, p)?;
    }
    summary::finish(ctx, &op, &summary, &plan.previous, end)
}

/// At the end of a run into `--saida output`: the records compacted, and a `.csv`, `.xlsx` or
/// `.geojson` written whole from them.
fn write_files(
    ctx: &mut Context,
    op: &BatchOptions,
    plan: &plan::Plan,
    summary: &Summary,
    output: &Path,
) -> Result<()> {
    let r = export::records_file(output, plan.format);
    let records = output::compact(&r, &plan.input.distinct).map_err(|e| CliError::io_at(&r, e))?;
    if !plan.format.is_rendered() {
        return Ok(());
    }
    let input_name = op.file.display().to_string();
    let batch = export::Batch {
        kind: op.kind,
        input_name: &input_name,
        input: &plan.input,
        records: &records,
        run: summary,
    };
    export::render(output, plan.format, &batch).map_err(|e| CliError::io_at(output, e))?;
    ctx.shell.note(format!(
        "{} linha(s) da entrada gravada(s) em {}.",
        plan.input.lines.len(),
        output.display()
    ));
    Ok(())
}

/// Records the keys answered without a request: receipts already on disk, and keys a killed run
/// paid for (at `preco`, the price of this batch's lookup, when known).
fn record_without_consulta(
    plan: &plan::Plan,
    preco: Option<Decimal>,
    writer: &mut RecordWriter<'_>,
    summary: &mut Summary,
) -> Result<()> {
    let record = |chave: &str, cobrado: bool| Record {
        cobrado,
        preco: preco.filter(|_| cobrado),
        ..Record::new(chave, BatchStatus::Found)
    };
    for k in &plan.existing_pdfs {
        let file = plan.pdf_dir.join(format!("{k}.pdf")).display().to_string();
        writer.append(&Record {
            message: Some("PDF já existia; não consultado de novo".into()),
            file: Some(file),
            ..record(k, false)
        })?;
        summary.found += 1;
    }
    for k in &plan.recovered {
        writer.append(&Record {
            http_status: Some(200),
            message: Some("cobrada numa execução interrompida; resposta não gravada".into()),
            ..record(k, true)
        })?;
        summary.found += 1;
    }
    Ok(())
}
