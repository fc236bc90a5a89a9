//! `carapi recibo CODIGO [--saida PATH] [--sobrescrever] [-o FORMATO]`: downloads the registration
//! receipt PDF (charged).
//!
//! Default file `<codigoCar>.pdf` in the current directory; `--saida DIR` saves `<codigoCar>.pdf`
//! inside `DIR`; `--saida -` writes the PDF to stdout. `-o` is the format of the report of what
//! was saved, as in every other command. An existing file is never overwritten without
//! `--sobrescrever`, and that is checked **before** the request, so a refusal costs nothing. The PDF is
//! streamed into a hidden temporary file next to the target and renamed when complete (never a
//! half file), with a progress bar on stderr.

use std::path::{Path, PathBuf};

use carapi_sdk::{Client, CodigoCar};
use serde::Serialize;

use crate::context::Context;
use crate::error::{CliError, Result};
use crate::options::{ArchiveArgs, FormatArgs};
use crate::output::OutputFormat;

/// Arguments of `carapi recibo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Código CAR
    #[arg(value_name = "CODIGO")]
    pub(crate) codigo: String,
    /// Arquivo de destino (padrão: {codigoCar}.pdf; um diretório; `-` para o stdout)
    #[arg(long = "saida", value_name = "ARQUIVO")]
    pub(crate) file: Option<PathBuf>,
    /// Sobrescreve o arquivo se já existir
    #[arg(long = "sobrescrever", alias = "force")]
    force: bool,
    /// Abre o PDF salvo no visualizador do sistema
    #[arg(long = "abrir")]
    pub(crate) open: bool,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    pub(crate) archive: ArchiveArgs,
}

/// What was saved (`carapi -o json recibo ...`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Saved<'a> {
    codigo_car: &'a str,
    #[serde(rename = "arquivo")]
    file: String,
    bytes: u64,
}

/// Runs `carapi recibo`.
///
/// Everything that can fail without the server is checked before the request: the code, an
/// existing file without `--sobrescrever`, the directory (the SDK creates the temporary file first).
///
/// # Errors
/// File exists without `--sobrescrever` (1, `ARQUIVO_EXISTE`, nothing charged), invalid code (2),
/// 401 (3), 402 (5), 404 (4), 429 (6), 5xx/network (7); a file that cannot be written after the
/// charge (1, `RECIBO_NAO_GRAVADO`, saying it was charged).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let codigo = CodigoCar::parse_pasted(&args.codigo).map_err(carapi_sdk::Error::from)?;
    let format = ctx.format(args.format);
    let destination = destination(&args.file, &codigo, args.force)?;
    if args.open && destination.is_none() {
        return Err(CliError::usage(
            "--abrir precisa de um arquivo: não use com --saida -",
        ));
    }
    let client = ctx.consulta_client(&args.archive).await?;
    if client.archive().is_some() {
        return through_archive(ctx, &client, &codigo, destination, format).await;
    }
    let Some(destination) = destination else {
        return to_stdout(ctx, &client, &codigo).await;
    };
    let bytes = to_file(ctx, &client, &codigo, &destination).await?;
    ctx.show_charge(&client, codigo.is_sandbox()).await;
    if args.open {
        open(ctx, &destination);
    }
    report(ctx, format, &codigo, &destination, bytes)
}

/// The file to write (`None`: stdout), refused when it exists without `--sobrescrever`.
fn destination(file: &Option<PathBuf>, codigo: &CodigoCar, force: bool) -> Result<Option<PathBuf>> {
    let name = format!("{}.pdf", codigo.as_str());
    let destination = match file {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) if p.is_dir() => Some(p.join(&name)),
        Some(p) => Some(p.clone()),
        None => Some(PathBuf::from(&name)),
    };
    if let Some(d) = destination.as_ref().filter(|d| d.exists() && !force) {
        return Err(
            CliError::other("ARQUIVO_EXISTE", format!("{} já existe", d.display())).hint(
                "use --sobrescrever para sobrescrever, ou --saida ARQUIVO para outro arquivo (nada foi cobrado)",
            ),
        );
    }
    Ok(destination)
}

/// With the archive: the PDF from the archive while fresh, else bought (and archived), then
/// written to `destination` (stdout when `None`).
async fn through_archive(
    ctx: &mut Context,
    client: &Client,
    codigo: &CodigoCar,
    destination: Option<PathBuf>,
    format: OutputFormat,
) -> Result<()> {
    let (recibo, origin) = crate::archive::split(client.recibo(codigo.as_str()).await?, true);
    let Some(destination) = destination else {
        ctx.shell.out().write_all(&recibo.bytes)?;
        ctx.show_origin(client, origin.as_ref(), codigo.is_sandbox())
            .await;
        return Ok(ctx.shell.out().flush()?);
    };
    std::fs::write(&destination, &recibo.bytes).map_err(|e| {
        CliError::io_at(&destination, e)
            .hint("o recibo está no acervo: carapi acervo mostrar SEQ --saida ARQUIVO")
    })?;
    ctx.show_origin(client, origin.as_ref(), codigo.is_sandbox())
        .await;
    report(ctx, format, codigo, &destination, recibo.bytes.len() as u64)
}

/// `--saida -`: the PDF on stdout as it arrives.
async fn to_stdout(ctx: &mut Context, client: &Client, codigo: &CodigoCar) -> Result<()> {
    let mut download = client.recibo_download(codigo.as_str()).await?;
    let pb = ctx
        .shell
        .progress(download.content_length().unwrap_or(0), PROGRESS_TEMPLATE);
    while let Some(chunk) = download.chunk().await? {
        pb.inc(chunk.len() as u64);
        ctx.shell.out().write_all(&chunk)?;
    }
    pb.finish_and_clear();
    ctx.show_charge(client, codigo.is_sandbox()).await;
    Ok(ctx.shell.out().flush()?)
}

const PROGRESS_TEMPLATE: &str = "{spinner} recibo [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}";

/// The PDF into `destination` through the SDK ([`Client::recibo_to_file_with_progress`]); a
/// failure after the 200 says the receipt was charged and how to get it again.
async fn to_file(
    ctx: &mut Context,
    client: &Client,
    codigo: &CodigoCar,
    destination: &Path,
) -> Result<u64> {
    let pb = ctx.shell.progress(0, PROGRESS_TEMPLATE);
    let mut charged = false;
    let download = client.recibo_to_file_with_progress(codigo.as_str(), destination, |p| {
        charged = true;
        pb.set_length(p.content_length.unwrap_or(0));
        pb.set_position(p.received);
    });
    let r = tokio::select! {
        r = download => r,
        _ = tokio::signal::ctrl_c() => {
            // The SDK removes its temporary file when the download is dropped.
            pb.finish_and_clear();
            return Err(CliError::interrupted(format!(
                "o recibo não foi gravado em {}; se a consulta já tinha sido respondida, foi cobrada (veja carapi historico)",
                destination.display()
            )));
        }
    };
    pb.finish_and_clear();
    match r {
        Ok(info) => Ok(info.bytes),
        Err(carapi_sdk::Error::Io(e)) if !charged => Err(CliError::other(
            "ES",
            format!(
                "não é possível gravar em {}: {}",
                destination.display(),
                crate::foreign_errors::io(&e)
            ),
        )
        .hint("confira o diretório de --saida (nada foi cobrado)")),
        Err(e) if charged && !e.may_have_charged() => {
            let cause = match &e {
                carapi_sdk::Error::Io(io) => crate::foreign_errors::io(io),
                other => CliError::from_ref(other).message,
            };
            let (charge, again) = if codigo.is_sandbox() {
                ("o recibo", "sandbox, sem cobrança")
            } else {
                ("o recibo foi cobrado, mas", "nova cobrança")
            };
            Err(CliError::other(
                "RECIBO_NAO_GRAVADO",
                format!("{charge} não foi gravado em {}: {cause}", destination.display()),
            )
            .hint(format!(
                "para obter o arquivo, consulte de novo ({again}): carapi recibo {} --saida OUTRO.pdf",
                codigo.as_str()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// `--abrir`: the saved PDF in the system's viewer; a warning when none opens it (the file is
/// saved and paid for either way: exit 0).
fn open(ctx: &mut Context, destination: &Path) {
    if let Err(reason) = open_in_viewer(destination) {
        ctx.shell.warn(format!(
            "não foi possível abrir {} no visualizador: {reason}; o arquivo está salvo, abra-o à mão",
            destination.display(),
        ));
    }
}

/// Linux and the BSDs: `xdg-open`, waited for, since its exit status is the only sign that no
/// viewer took the file (opener starts it and returns at once, so a missing viewer was silent).
#[cfg(all(unix, not(target_os = "macos")))]
fn open_in_viewer(destination: &Path) -> std::result::Result<(), String> {
    let status = std::process::Command::new("xdg-open")
        .arg(destination)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "xdg-open não encontrado (nenhum visualizador configurado)".to_owned()
            }
            _ => crate::foreign_errors::io(&e),
        })?;
    if status.success() {
        Ok(())
    } else {
        Err("nenhum visualizador de PDF respondeu (xdg-open falhou)".to_owned())
    }
}

/// Elsewhere: the system's opener (macOS `open`, Windows `start`), which reports its failures.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn open_in_viewer(destination: &Path) -> std::result::Result<(), String> {
    opener::open(destination).map_err(|e| match &e {
        opener::OpenError::Io(io) => crate::foreign_errors::io(io),
        _ => "nenhum visualizador de PDF respondeu".to_owned(),
    })
}

/// What was saved, in the chosen format.
fn report(
    ctx: &mut Context,
    format: OutputFormat,
    codigo: &CodigoCar,
    destination: &Path,
    bytes: u64,
) -> Result<()> {
    let file = destination.display().to_string();
    match format {
        OutputFormat::Json => ctx.shell.json(&Saved {
            codigo_car: codigo.as_str(),
            file,
            bytes,
        })?,
        OutputFormat::Csv | OutputFormat::RawCsv => {
            let mut t = crate::format::Listing::new(&[
                ("codigoCar", "Código CAR"),
                ("arquivo", "Arquivo"),
                ("bytes", "Bytes"),
            ]);
            t.push_row(vec![
                crate::format::CellValue::text(codigo.as_str()),
                crate::format::CellValue::text(&file),
                crate::format::CellValue::integer(bytes),
            ]);
            ctx.shell.listing(&t, format)?;
        }
        OutputFormat::Table | OutputFormat::Geojson => {
            ctx.shell.line(&file)?;
            ctx.shell
                .note(format!("Recibo salvo em {file} ({bytes} bytes)"));
        }
    }
    Ok(())
}
