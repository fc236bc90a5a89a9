//! The plan of a batch, before any charge: the input read and normalised ([`super::input`]),
//! what `--saida` already answers, the receipts already on disk, and the keys a killed run paid
//! for without writing their answer (the journal, [`super::journal`], checked against the free
//! history).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use carapi_sdk::{ClientBuilder, HistoricoParams, StatusConsulta};

use super::input::{self, Input};
use super::output::{self, FileFormat, Previous};
use super::{BatchKind, BatchOptions, journal};
use crate::context::Context;
use crate::error::{CliError, Result};

/// What a batch will do.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The parsed input.
    pub(crate) input: Input,
    /// Keys to look up now, in input order.
    pub(crate) pending: Vec<String>,
    /// Receipt batches: keys whose PDF is already in [`Plan::pdf_dir`] (recorded, not bought).
    pub(crate) existing_pdfs: Vec<String>,
    /// Keys charged by a killed run whose answer was never written (recorded, not bought again).
    pub(crate) recovered: Vec<String>,
    /// Keys with a final answer in `--saida` already.
    already_answered: usize,
    /// Counts of the records already in `--saida` (for the cumulative summary).
    pub(crate) previous: Previous,
    /// Where receipt PDFs go: the directory of `--saida`, else the current one.
    pub(crate) pdf_dir: PathBuf,
    /// The journal of keys in flight, next to `--saida`.
    pub(crate) journal: Option<PathBuf>,
    /// The output's format.
    pub(crate) format: FileFormat,
}

/// Reads the input and the previous output, and works out what is left to do.
///
/// # Errors
/// Unreadable input or output (1); an input with no valid key (2); history errors (3, 6, 7).
pub(crate) async fn make_plan(
    ctx: &mut Context,
    op: &BatchOptions,
    base: &ClientBuilder,
) -> Result<Plan> {
    let parsed = read_input(ctx, &op.file, op.kind, op.column.as_deref())?;
    let format = match &op.output {
        Some(p) => FileFormat::by_extension(p),
        None => FileFormat::Jsonl,
    };
    let previous = match &op.output {
        Some(p) => {
            refuse_finished(p, format)?;
            let r = super::export::records_file(p, format);
            let records = output::read(&r).map_err(|e| CliError::io_at(&r, e))?;
            let a = output::previous(&records);
            same_kind(p, op.kind, &a)?;
            a.of_input(&parsed.distinct)
        }
        None => Previous::default(),
    };
    let mut answered: HashSet<String> = previous.answered.clone();
    let pdf_dir = match &op.output {
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => PathBuf::from("."),
    };
    let existing_pdfs: Vec<String> = if op.kind == BatchKind::Recibo {
        parsed
            .distinct
            .iter()
            .filter(|k| !answered.contains(*k) && pdf_dir.join(format!("{k}.pdf")).is_file())
            .cloned()
            .collect()
    } else {
        vec![]
    };
    answered.extend(existing_pdfs.iter().cloned());
    let journal = op.output.as_deref().map(journal::journal_path);
    let recovered = match &journal {
        Some(dp) => recover(dp, op.kind, &parsed, &answered, base).await?,
        None => vec![],
    };
    answered.extend(recovered.iter().cloned());
    let pending: Vec<String> = parsed
        .distinct
        .iter()
        .filter(|k| !answered.contains(*k))
        .cloned()
        .collect();
    let already_answered =
        parsed.distinct.len() - pending.len() - existing_pdfs.len() - recovered.len();
    let plan = Plan {
        input: parsed,
        pending,
        existing_pdfs,
        recovered,
        already_answered,
        previous,
        pdf_dir,
        journal,
        format,
    };
    announce(ctx, &plan);
    Ok(plan)
}

/// Refuses a `.csv`/`.xlsx`/`.geojson` that exists without its records: a file the CLI did not
/// write (or whose records were removed). Resuming would not know which keys it answers, and
/// would buy them again.
fn refuse_finished(output: &Path, format: FileFormat) -> Result<()> {
    let records = super::export::records_file(output, format);
    if format.is_rendered() && output.exists() && !records.exists() {
        return Err(CliError::usage(format!(
            "{} já existe sem os registros do lote ao lado ({}): não foi gravado por um lote",
            output.display(),
            records.file_name().unwrap_or_default().to_string_lossy()
        ))
        .hint("para consultar estas chaves de novo, ou outras, use outro arquivo em --saida (nada foi cobrado)"));
    }
    Ok(())
}

/// Refuses to resume into an output of another kind of lookup (`lote completo` into the output
/// of `lote car` would skip every key and never give the owner columns).
fn same_kind(output: &Path, kind: BatchKind, a: &Previous) -> Result<()> {
    match a.kinds.iter().find(|t| **t != kind) {
        Some(other) => Err(CliError::usage(format!(
            "{} tem respostas de `carapi lote {}`, não de `carapi lote {}`",
            output.display(),
            other.name(),
            kind.name()
        ))
        .hint(format!(
            "use outro arquivo em --saida para o lote {} (nada foi cobrado)",
            kind.name()
        ))),
        None => Ok(()),
    }
}

/// The input file `file` (or stdin for `-`) of a `kind` lookup, parsed (its `--coluna`
/// `column`); invalid keys reported on stderr. Also `carapi vigiar`'s list.
///
/// # Errors
/// An unreadable file (1); a bad `--coluna` or no valid key (2).
pub(crate) fn read_input(
    ctx: &mut Context,
    file: &Path,
    kind: BatchKind,
    column: Option<&str>,
) -> Result<Input> {
    let bytes = if file.as_os_str() == "-" {
        let mut b = vec![];
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)
            .map_err(|e| CliError::io_at(Path::new("-"), e))?;
        b
    } else {
        std::fs::read(file).map_err(|e| CliError::io_at(file, e))?
    };
    let text = String::from_utf8_lossy(&bytes);
    let parsed = input::read_with(&text, kind.chave_kind(), column).map_err(|e| {
        CliError::usage(e).hint("confira --coluna (nome do cabeçalho ou número, a partir de 1)")
    })?;
    for inv in parsed.invalid.iter().take(20) {
        ctx.shell.warn(format!(
            "linha {}: chave inválida {:?} ({}); não será enviada",
            inv.line, inv.raw, inv.reason
        ));
    }
    if parsed.invalid.len() > 20 {
        ctx.shell.warn(format!(
            "... e mais {} chaves inválidas",
            parsed.invalid.len() - 20
        ));
    }
    if parsed.distinct.is_empty() {
        let what = match kind.chave_kind() {
            input::ChaveKind::Car => "código CAR",
            input::ChaveKind::Document => "CPF/CNPJ",
        };
        return Err(CliError::usage(format!(
            "nenhuma chave válida na entrada ({} linha(s) inválida(s)); nada foi enviado",
            parsed.invalid.len()
        ))
        .hint(format!(
            "uma chave ({what}) por linha, ou um CSV com a coluna cod_imovel, codigo_car, cpf, cnpj ou cpf_cnpj (ou --coluna NOME|N)"
        )));
    }
    Ok(parsed)
}

/// Keys the journal says were sent by a run killed before their answer was written, and that the
/// history shows charged since: not bought again.
async fn recover(
    dp: &Path,
    kind: BatchKind,
    parsed: &Input,
    answered: &HashSet<String>,
    base: &ClientBuilder,
) -> Result<Vec<String>> {
    let incertos: Vec<_> = journal::read(dp)
        .map_err(|e| CliError::io_at(dp, e))?
        .into_iter()
        .filter(|(k, _)| !answered.contains(k) && parsed.distinct.contains(k))
        .collect();
    if incertos.is_empty() {
        return Ok(vec![]);
    }
    let c = base.clone().build()?;
    let mut recovered = vec![];
    for (k, since) in incertos {
        let params = HistoricoParams {
            busca: Some(k.clone()),
            endpoint: Some(kind.endpoint()),
            status: Some(StatusConsulta::Sucesso),
            size: Some(100),
            page: None,
        };
        let h = c.historico(&params).await?;
        let earliest = since - chrono::Duration::seconds(60);
        if h.itens.iter().any(|i| {
            i.cobrado && i.chave_consulta.as_deref() == Some(k.as_str()) && i.data >= earliest
        }) {
            recovered.push(k);
        }
    }
    Ok(recovered)
}

fn announce(ctx: &mut Context, p: &Plan) {
    if p.input.duplicates > 0 {
        ctx.shell.note(format!(
            "{} chave(s) duplicada(s) ignorada(s).",
            p.input.duplicates
        ));
    }
    if p.already_answered > 0 {
        ctx.shell.note(format!(
            "{} chave(s) já respondida(s) em --saida: retomando sem consultá-las de novo.",
            p.already_answered
        ));
    }
    if !p.recovered.is_empty() {
        ctx.shell.warn(format!(
            "{} chave(s) foram cobradas numa execução interrompida sem que a resposta fosse gravada; \
             não serão consultadas de novo (status encontrado, sem dados; consulte-as à parte se precisar)",
            p.recovered.len()
        ));
    }
}
