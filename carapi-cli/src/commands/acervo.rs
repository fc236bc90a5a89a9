//! `carapi acervo listar|mostrar|titular|expurgar|verificar|exportar`: the archive of paid
//! answers (what was bought, when, at what price, for what purpose; the LGPD tools).

use std::path::PathBuf;

use carapi_sdk::CpfCnpj;
use carapi_sdk::archive::{Archive, Entry, Head};

use crate::archive::{open_configured, when};
use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use crate::format::{CellValue, Fields, Listing};
use crate::options::FormatArgs;
use crate::output::OutputFormat;

/// Arguments of `carapi acervo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Sub,
}

/// Subcommands of `carapi acervo`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Lista as consultas arquivadas (o que, quando, preço, finalidade, base legal)
    #[command(name = "listar")]
    List {
        /// Só as de uma conta: a impressão de uma chave (16 dígitos hexadecimais, como `mostrar`
        /// a exibe), com as das chaves vinculadas a ela
        #[arg(long = "conta", value_name = "IMPRESSAO")]
        conta: Option<String>,
        /// `-o/--formato`.
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Mostra uma consulta arquivada e a resposta guardada
    #[command(name = "mostrar")]
    Show {
        /// Número da entrada (coluna `seq` de `listar`)
        #[arg(value_name = "SEQ")]
        seq: u64,
        /// Grava o corpo guardado (JSON ou PDF) neste arquivo
        #[arg(long = "saida", value_name = "ARQUIVO")]
        out: Option<PathBuf>,
        /// `-o/--formato`.
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Lista tudo o que o acervo guarda sobre um CPF/CNPJ (pedido do titular, LGPD art. 18)
    #[command(name = "titular")]
    Subject {
        /// CPF ou CNPJ, com ou sem máscara
        #[arg(value_name = "CPF_CNPJ")]
        documento: String,
        /// `-o/--formato`.
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Remove os dados pessoais de entradas (por documento ou antes de uma data), mantendo o registro da cobrança e a cadeia
    #[command(name = "expurgar")]
    Purge {
        /// Remove o conteúdo de toda entrada que contém este CPF/CNPJ
        #[arg(
            long = "documento",
            value_name = "CPF_CNPJ",
            conflicts_with = "before",
            required_unless_present = "before"
        )]
        documento: Option<String>,
        /// Remove o conteúdo das entradas compradas antes desta data (aaaa-mm-dd, meia-noite no horário de Brasília)
        #[arg(long = "antes-de", value_name = "DATA")]
        before: Option<String>,
        /// Não pergunta: responde sim
        #[arg(short = 's', long = "sim", alias = "yes", short_alias = 'y')]
        yes: bool,
    },
    /// Verifica a cadeia de hashes (sai com código 1 se algo foi alterado)
    #[command(name = "verificar")]
    Verify {
        /// A cabeça guardada em outro lugar (SEQ:HASH, como `verificar` a mostra)
        #[arg(long = "cabeca", value_name = "SEQ:HASH")]
        head: Option<String>,
        /// `-o/--formato`.
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Vincula a chave atual (ou --nova) à conta de uma chave antiga, depois de uma rotação: as
    /// duas impressões passam a listar as mesmas entradas (`carapi login` o faz ao trocar a chave)
    #[command(name = "vincular")]
    Link {
        /// Impressão da chave antiga (16 dígitos hexadecimais, como `mostrar` a exibe)
        #[arg(long = "antiga", value_name = "IMPRESSAO")]
        old: String,
        /// Impressão da chave nova (padrão: a da chave configurada)
        #[arg(long = "nova", value_name = "IMPRESSAO")]
        new: Option<String>,
    },
    /// Exporta o registro das consultas para um auditor, todos os campos de cada entrada: tabela, JSON (-o json), CSV para planilha (-o csv) ou de máquina (-o csv-cru)
    #[command(name = "exportar")]
    Export {
        /// Arquivo de saída (padrão: a saída padrão); num arquivo, -o tabela grava o CSV para planilha
        #[arg(long = "saida", value_name = "ARQUIVO")]
        out: Option<PathBuf>,
        /// `-o/--formato`.
        #[command(flatten)]
        format: FormatArgs,
    },
}

/// Runs `carapi acervo`.
///
/// # Errors
/// No archive configured (2), a chain that does not verify (1), file errors (1).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let archive = open_configured(&ctx.paths)?;
    let fail = |e: carapi_sdk::archive::ArchiveError| {
        CliError::other("ACERVO", carapi_sdk::error_chain(&e))
    };
    match args.command {
        Sub::List { conta, format } => {
            let format = ctx.format(format);
            let entries = match conta {
                Some(fp) => archive.conta_entries(&fp),
                None => archive.entries(),
            }
            .map_err(fail)?;
            list(ctx, &entries, format)
        }
        Sub::Link { old, new } => link(ctx, &archive, &old, new),
        Sub::Subject { documento, format } => {
            let format = ctx.format(format);
            let doc = CpfCnpj::parse(&documento).map_err(carapi_sdk::Error::from)?;
            let entries = archive.subject(&doc).map_err(fail)?;
            list(ctx, &entries, format)?;
            if format == OutputFormat::Table {
                ctx.shell
                    .status(format!("{} entrada(s) com este documento", entries.len()));
            }
            // The purges at the owner's request: the archive remembers them (a keyed hash),
            // and refuses to buy the document's owner lookup again.
            for at in archive.purges_of(&doc).map_err(fail)? {
                ctx.shell.note(format!(
                    "expurgado a pedido do titular em {} (horário de Brasília): uma nova consulta do documento é recusada sem --comprar",
                    crate::format::brasilia_minutes(at)
                ));
            }
            Ok(())
        }
        Sub::Show { seq, out, format } => show(ctx, &archive, seq, out, ctx.format(format)),
        Sub::Purge {
            documento,
            before,
            yes,
        } => purge(ctx, &archive, documento, before, yes),
        Sub::Verify { head, format } => verify(ctx, &archive, head, ctx.format(format)),
        Sub::Export { out, format } => export(ctx, &archive, out, ctx.format(format)),
    }
}

/// `carapi acervo vincular`: the new fingerprint (given, or the configured key's) linked to
/// the old one's account.
fn link(ctx: &mut Context, archive: &Archive, old: &str, new: Option<String>) -> Result<()> {
    let new = match new {
        Some(n) => n,
        None => crate::credentials::resolve(&ctx.paths)?
            .map(|c| carapi_sdk::archive::fingerprint(&c.key))
            .ok_or_else(|| {
                CliError::new(Kind::Usage, "SEM_CHAVE", "nenhuma chave configurada")
                    .hint("--nova IMPRESSAO, ou carapi login")
            })?,
    };
    archive.link_contas(old, &new).map_err(|e| {
        CliError::new(
            Kind::Usage,
            "IMPRESSAO_INVALIDA",
            carapi_sdk::error_chain(&e),
        )
        .hint("--antiga IMPRESSAO")
    })?;
    let linked = archive
        .linked_contas(&new)
        .map_err(|e| CliError::other("ACERVO", carapi_sdk::error_chain(&e)))?;
    ctx.shell.note(format!(
        "conta vinculada: {} listam as mesmas entradas",
        linked.join(", ")
    ));
    Ok(())
}

/// After `carapi login` replaced a stored key by another, with an archive configured: when
/// the server now refuses the old key (401: the account's key was rotated, see the contract's
/// "Authentication"), the new key's fingerprint is linked to the old one's; when the old key
/// still works (another account), nothing is linked and the way to link by hand is shown.
/// Never fails the login: a problem is a warning.
pub(crate) async fn link_after_login(ctx: &mut Context, old_key: &str, new_key: &str) {
    let (old, new) = (
        carapi_sdk::archive::fingerprint(old_key),
        carapi_sdk::archive::fingerprint(new_key),
    );
    let Some(path) = crate::config::ConfigFile::load(&ctx.paths)
        .ok()
        .and_then(|cfg| crate::archive::configured(&cfg, &ctx.paths))
    else {
        return;
    };
    if old == new {
        return;
    }
    let Ok((base_url, _)) = ctx.base_url() else {
        return;
    };
    let refused = match carapi_sdk::Client::builder()
        .base_url(&base_url)
        .api_key(old_key)
        .build()
    {
        Ok(c) => c.saldo().await.err().and_then(|e| e.status()) == Some(401),
        Err(_) => false,
    };
    if !refused {
        ctx.shell.note(format!(
            "Acervo: a chave anterior ({old}) ainda vale, então é de outra conta e nada foi \
             vinculado; se a nova a substitui: carapi acervo vincular --antiga {old}"
        ));
        return;
    }
    match crate::archive::open(&path).and_then(|a| {
        a.link_contas(&old, &new)
            .map_err(|e| CliError::other("ACERVO", carapi_sdk::error_chain(&e)))
    }) {
        Ok(()) => ctx.shell.note(format!(
            "Acervo: a chave anterior ({old}) foi recusada (rotação); a nova ({new}) foi \
             vinculada à mesma conta."
        )),
        Err(e) => ctx.shell.warn(format!(
            "acervo: não foi possível vincular a chave nova à anterior ({}); carapi acervo vincular --antiga {old}",
            e.message
        )),
    }
}

fn list(ctx: &mut Context, entries: &[Entry], format: OutputFormat) -> Result<()> {
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(entries)?);
    }
    let mut t = Listing::titled(&[
        "seq",
        "operacao",
        "chave",
        "preco",
        "compradoEm",
        "finalidade",
        "baseLegal",
        "expurgadoEm",
    ]);
    for e in entries {
        t.push_row(vec![
            CellValue::text(e.seq.to_string()),
            CellValue::text(e.consulta.name()),
            CellValue::optional(e.chave.as_deref()),
            CellValue::optional_money(e.preco, "—"),
            instant(e.bought_at),
            CellValue::text(&e.purpose),
            CellValue::text(&e.legal_basis),
            e.purged_at.map_or(CellValue::optional(None), instant),
        ]);
    }
    ctx.use_pager(format);
    Ok(ctx.shell.listing(&t, format)?)
}

/// An instant of the archive: Brasília time in tables and `-o csv`, RFC 3339 in `-o csv-cru`.
fn instant(t: carapi_sdk::DateTime<carapi_sdk::Utc>) -> CellValue {
    CellValue {
        human: when(t),
        raw: t.to_rfc3339(),
    }
}

/// `carapi acervo exportar`: the record of processing, every field of every entry, in the format
/// `-o` asks for (JSON, the table, the analyst's or the machine's CSV), to `--saida` or stdout.
fn export(
    ctx: &mut Context,
    archive: &Archive,
    out: Option<PathBuf>,
    format: OutputFormat,
) -> Result<()> {
    let fail = |e: carapi_sdk::archive::ArchiveError| {
        CliError::other("ACERVO", carapi_sdk::error_chain(&e))
    };
    let entries = archive.entries().map_err(fail)?;
    let mut t = Listing::titled(&[
        "seq",
        "operacao",
        "chave",
        "preco",
        "dataConsulta",
        "compradoEm",
        "conta",
        "finalidade",
        "baseLegal",
        "hashConteudo",
        "hashAnterior",
        "hash",
        "expurgadoEm",
    ]);
    for e in &entries {
        t.push_row(vec![
            CellValue::text(e.seq.to_string()),
            CellValue::text(e.consulta.name()),
            CellValue::optional(e.chave.as_deref()),
            CellValue::optional_money(e.preco, "—"),
            CellValue::optional(e.data_consulta.as_deref()),
            instant(e.bought_at),
            CellValue::text(&e.conta),
            CellValue::text(&e.purpose),
            CellValue::text(&e.legal_basis),
            CellValue::text(&e.content_hash),
            CellValue::text(&e.prev_hash),
            CellValue::text(&e.hash),
            e.purged_at.map_or(CellValue::optional(None), instant),
        ]);
    }
    let Some(path) = out else {
        return match format {
            OutputFormat::Json => {
                let mut buf = Vec::new();
                archive.export_json(&mut buf).map_err(fail)?;
                Ok(ctx.shell.line(String::from_utf8_lossy(&buf).trim_end())?)
            }
            _ => Ok(ctx.shell.listing(&t, format)?),
        };
    };
    let bytes = match format {
        OutputFormat::Json => {
            let mut buf = Vec::new();
            archive.export_json(&mut buf).map_err(fail)?;
            buf.push(b'\n');
            buf
        }
        // A file is for a spreadsheet or a script: the table's form is the analyst's CSV.
        OutputFormat::Table | OutputFormat::Geojson => {
            crate::output::csv_bytes(&t, OutputFormat::Csv)?
        }
        other => crate::output::csv_bytes(&t, other)?,
    };
    std::fs::write(&path, bytes).map_err(|e| CliError::io_at(&path, e))?;
    ctx.shell.note(format!(
        "{} entrada(s) exportada(s) para {}",
        entries.len(),
        path.display()
    ));
    Ok(())
}

fn show(
    ctx: &mut Context,
    archive: &Archive,
    seq: u64,
    out: Option<PathBuf>,
    format: OutputFormat,
) -> Result<()> {
    let fail = |e: carapi_sdk::archive::ArchiveError| {
        CliError::other("ACERVO", carapi_sdk::error_chain(&e))
    };
    let entry = archive.entry(seq).map_err(fail)?.ok_or_else(|| {
        CliError::new(
            Kind::NotFound,
            "ENTRADA_NAO_ENCONTRADA",
            format!("o acervo não tem a entrada {seq}"),
        )
    })?;
    let body = archive.body(seq).map_err(fail)?;
    if let (Some(p), Some(b)) = (&out, &body) {
        std::fs::write(p, b).map_err(|e| CliError::io_at(p, e))?;
    }
    if format == OutputFormat::Json {
        let mut v = serde_json::to_value(&entry).unwrap_or_default();
        let body = body
            .as_deref()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok());
        if let Some(map) = v.as_object_mut() {
            map.insert("corpo".into(), body.unwrap_or_default());
        }
        return Ok(ctx.shell.json(&v)?);
    }
    let mut f = Fields::new();
    f.titled("seq", CellValue::text(entry.seq.to_string()))
        .titled("operacao", CellValue::text(entry.consulta.name()))
        .titled("chave", CellValue::optional(entry.chave.as_deref()))
        .titled("preco", CellValue::optional_money(entry.preco, "—"))
        .titled(
            "dataConsulta",
            CellValue::optional(entry.data_consulta.as_deref()),
        )
        .titled("compradoEm", instant(entry.bought_at))
        .titled("conta", CellValue::text(&entry.conta))
        .titled("finalidade", CellValue::text(&entry.purpose))
        .titled("baseLegal", CellValue::text(&entry.legal_basis))
        .titled("hash", CellValue::text(&entry.hash))
        .titled(
            "expurgadoEm",
            entry.purged_at.map_or(CellValue::optional(None), instant),
        )
        .add(
            "bytes",
            "Corpo guardado",
            CellValue::text(
                body.as_ref()
                    .map_or("expurgado".to_owned(), |b| format!("{} bytes", b.len())),
            ),
        );
    Ok(ctx.shell.fields(&f, format)?)
}

fn purge(
    ctx: &mut Context,
    archive: &Archive,
    documento: Option<String>,
    before: Option<String>,
    yes: bool,
) -> Result<()> {
    let fail = |e: carapi_sdk::archive::ArchiveError| {
        CliError::other("ACERVO", carapi_sdk::error_chain(&e))
    };
    let question;
    let target = if let Some(d) = documento {
        let doc = CpfCnpj::parse(&d).map_err(carapi_sdk::Error::from)?;
        let n = archive.subject(&doc).map_err(fail)?.len();
        question = format!("Remover os dados pessoais de {n} entrada(s) com este documento?");
        Ok(doc)
    } else {
        let day = before.unwrap_or_default();
        let date = chrono::NaiveDate::parse_from_str(day.trim(), "%Y-%m-%d").map_err(|_| {
            CliError::new(
                Kind::Usage,
                "DATA_INVALIDA",
                format!("data inválida {day:?}"),
            )
            .hint("--antes-de aaaa-mm-dd")
        })?;
        question = format!(
            "Remover os dados pessoais das entradas compradas antes de {} (00:00, horário de Brasília)?",
            date.format("%d/%m/%Y")
        );
        Err(start_of_day(date))
    };
    if !yes {
        if !ctx.shell.can_prompt() {
            return Err(
                CliError::new(Kind::Usage, "CONFIRMACAO", "expurgar pede confirmação")
                    .hint("--sim para confirmar sem perguntar"),
            );
        }
        if !crate::prompt::confirm(&question)? {
            ctx.shell.note("nada removido");
            return Ok(());
        }
    }
    let n = match target {
        Ok(doc) => archive.purge_documento(&doc),
        Err(t) => archive.purge_before(t),
    }
    .map_err(fail)?;
    ctx.shell.note(format!(
        "{n} entrada(s) expurgada(s): conteúdo removido, registro da cobrança e cadeia mantidos"
    ));
    Ok(())
}

/// The instant `--antes-de DATE` names: midnight in Brasília of the day the analyst typed (with
/// the offset of that day), not in UTC, which would leave out what was bought from 21:00 on.
fn start_of_day(date: chrono::NaiveDate) -> carapi_sdk::DateTime<carapi_sdk::Utc> {
    crate::format::from_brasilia(date.and_time(chrono::NaiveTime::MIN)).to_utc()
}

fn verify(
    ctx: &mut Context,
    archive: &Archive,
    head: Option<String>,
    format: OutputFormat,
) -> Result<()> {
    let kept = head
        .map(|h| h.parse::<Head>())
        .transpose()
        .map_err(|e| CliError::new(Kind::Usage, "CABECA_INVALIDA", e).hint("--cabeca SEQ:HASH"))?;
    let v = archive
        .verify(kept.as_ref())
        .map_err(|e| CliError::other("ACERVO", carapi_sdk::error_chain(&e)))?;
    if format == OutputFormat::Json {
        ctx.shell.json(&v)?;
    } else {
        for f in &v.failures {
            ctx.shell.warn(f);
        }
        let head = v
            .head
            .as_ref()
            .map_or("(vazio)".to_owned(), ToString::to_string);
        ctx.shell.line(format!("cabeça: {head}"))?;
        ctx.shell.note(format!(
            "{} entrada(s), {} expurgada(s); guarde a cabeça em outro lugar e use --cabeca para verificar contra ela",
            v.entries, v.purged
        ));
    }
    if v.is_ok() {
        Ok(())
    } else {
        Err(CliError::other(
            "ACERVO_ADULTERADO",
            format!(
                "a cadeia do acervo não confere ({} problema(s))",
                v.failures.len()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn antes_de_is_midnight_in_brasilia() {
        let day = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(
            super::start_of_day(day("2025-01-01")).to_rfc3339(),
            "2025-01-01T03:00:00+00:00"
        );
        assert_eq!(
            super::start_of_day(day("2018-12-01")).to_rfc3339(),
            "2018-12-01T02:00:00+00:00",
            "a daylight-saving day"
        );
    }
}
