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
use crate::opcoes::FormatoArgs;
use crate::output::Formato;

/// Arguments of `carapi recibo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Código CAR
    #[arg(value_name = "CODIGO")]
    pub codigo: String,
    /// Arquivo de destino (padrão: {codigoCar}.pdf; um diretório; `-` para o stdout)
    #[arg(long = "saida", value_name = "ARQUIVO")]
    pub arquivo: Option<PathBuf>,
    /// Sobrescreve o arquivo se já existir
    #[arg(long = "sobrescrever", alias = "force")]
    pub force: bool,
    /// Abre o PDF salvo no visualizador do sistema
    #[arg(long)]
    pub abrir: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub formato: FormatoArgs,
}

/// What was saved (`carapi -o json recibo ...`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Salvo<'a> {
    codigo_car: &'a str,
    arquivo: String,
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
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let codigo = CodigoCar::parse(&args.codigo).map_err(carapi_sdk::Error::from)?;
    let formato = ctx.formato(args.formato);
    let destino = destino(&args.arquivo, &codigo, args.force)?;
    if args.abrir && destino.is_none() {
        return Err(CliError::usage(
            "--abrir precisa de um arquivo: não use com --saida -",
        ));
    }
    let client = ctx.client().await?;
    let Some(destino) = destino else {
        return para_stdout(ctx, &client, &codigo).await;
    };
    let bytes = para_arquivo(ctx, &client, &codigo, &destino).await?;
    ctx.mostrar_cobranca(&client, codigo.is_sandbox()).await;
    if args.abrir {
        abrir(ctx, &destino);
    }
    relatar(ctx, formato, &codigo, &destino, bytes)
}

/// The file to write (`None`: stdout), refused when it exists without `--sobrescrever`.
fn destino(arquivo: &Option<PathBuf>, codigo: &CodigoCar, force: bool) -> Result<Option<PathBuf>> {
    let nome = format!("{}.pdf", codigo.as_str());
    let destino = match arquivo {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) if p.is_dir() => Some(p.join(&nome)),
        Some(p) => Some(p.clone()),
        None => Some(PathBuf::from(&nome)),
    };
    if let Some(d) = destino.as_ref().filter(|d| d.exists() && !force) {
        return Err(
            CliError::other("ARQUIVO_EXISTE", format!("{} já existe", d.display())).hint(
                "use --sobrescrever para sobrescrever, ou --saida ARQUIVO para outro arquivo (nada foi cobrado)",
            ),
        );
    }
    Ok(destino)
}

/// `--saida -`: the PDF on stdout as it arrives.
async fn para_stdout(ctx: &mut Context, client: &Client, codigo: &CodigoCar) -> Result<()> {
    let mut download = client.recibo_download(codigo.as_str()).await?;
    let pb = ctx
        .shell
        .progress(download.content_length().unwrap_or(0), BARRA);
    while let Some(chunk) = download.chunk().await? {
        pb.inc(chunk.len() as u64);
        ctx.shell.out().write_all(&chunk)?;
    }
    pb.finish_and_clear();
    ctx.mostrar_cobranca(client, codigo.is_sandbox()).await;
    Ok(ctx.shell.out().flush()?)
}

const BARRA: &str = "{spinner} recibo [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}";

/// The PDF into `destino` through the SDK ([`Client::recibo_to_file_with_progress`]); a
/// failure after the 200 says the receipt was charged and how to get it again.
async fn para_arquivo(
    ctx: &mut Context,
    client: &Client,
    codigo: &CodigoCar,
    destino: &Path,
) -> Result<u64> {
    let pb = ctx.shell.progress(0, BARRA);
    let mut cobrado = false;
    let download = client.recibo_to_file_with_progress(codigo.as_str(), destino, |p| {
        cobrado = true;
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
                destino.display()
            )));
        }
    };
    pb.finish_and_clear();
    match r {
        Ok(info) => Ok(info.bytes),
        Err(carapi_sdk::Error::Io(e)) if !cobrado => Err(CliError::other(
            "ES",
            format!(
                "não é possível gravar em {}: {}",
                destino.display(),
                crate::estrangeiros::io(&e)
            ),
        )
        .hint("confira o diretório de --saida (nada foi cobrado)")),
        Err(e) if cobrado && !e.may_have_charged() => {
            let causa = match &e {
                carapi_sdk::Error::Io(io) => crate::estrangeiros::io(io),
                outro => CliError::from_ref(outro).message,
            };
            let (cobranca, de_novo) = if codigo.is_sandbox() {
                ("o recibo", "sandbox, sem cobrança")
            } else {
                ("o recibo foi cobrado, mas", "nova cobrança")
            };
            Err(CliError::other(
                "RECIBO_NAO_GRAVADO",
                format!("{cobranca} não foi gravado em {}: {causa}", destino.display()),
            )
            .hint(format!(
                "para obter o arquivo, consulte de novo ({de_novo}): carapi recibo {} --saida OUTRO.pdf",
                codigo.as_str()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// `--abrir`: the saved PDF in the system's viewer; a warning when none opens it (the file is
/// saved and paid for either way: exit 0).
fn abrir(ctx: &mut Context, destino: &Path) {
    if let Err(motivo) = abrir_no_visualizador(destino) {
        ctx.shell.warn(format!(
            "não foi possível abrir {} no visualizador: {motivo}; o arquivo está salvo, abra-o à mão",
            destino.display(),
        ));
    }
}

/// Linux and the BSDs: `xdg-open`, waited for, since its exit status is the only sign that no
/// viewer took the file (opener starts it and returns at once, so a missing viewer was silent).
#[cfg(all(unix, not(target_os = "macos")))]
fn abrir_no_visualizador(destino: &Path) -> std::result::Result<(), String> {
    let status = std::process::Command::new("xdg-open")
        .arg(destino)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "xdg-open não encontrado (nenhum visualizador configurado)".to_owned()
            }
            _ => crate::estrangeiros::io(&e),
        })?;
    if status.success() {
        Ok(())
    } else {
        Err("nenhum visualizador de PDF respondeu (xdg-open falhou)".to_owned())
    }
}

/// Elsewhere: the system's opener (macOS `open`, Windows `start`), which reports its failures.
#[cfg(not(all(unix, not(target_os = "macos"))))]
fn abrir_no_visualizador(destino: &Path) -> std::result::Result<(), String> {
    opener::open(destino).map_err(|e| match &e {
        opener::OpenError::Io(io) => crate::estrangeiros::io(io),
        _ => "nenhum visualizador de PDF respondeu".to_owned(),
    })
}

/// What was saved, in the chosen format.
fn relatar(
    ctx: &mut Context,
    formato: Formato,
    codigo: &CodigoCar,
    destino: &Path,
    bytes: u64,
) -> Result<()> {
    let arquivo = destino.display().to_string();
    match formato {
        Formato::Json => ctx.shell.json(&Salvo {
            codigo_car: codigo.as_str(),
            arquivo,
            bytes,
        })?,
        Formato::Csv | Formato::CsvCru => {
            let mut t = crate::format::Tabela::new(&[
                ("codigoCar", "Código CAR"),
                ("arquivo", "Arquivo"),
                ("bytes", "Bytes"),
            ]);
            t.linha(vec![
                crate::format::Celula::texto(codigo.as_str()),
                crate::format::Celula::texto(&arquivo),
                crate::format::Celula::inteiro(bytes),
            ]);
            ctx.shell.tabela(&t, formato)?;
        }
        Formato::Table | Formato::Geojson => {
            ctx.shell.line(&arquivo)?;
            ctx.shell
                .note(format!("Recibo salvo em {arquivo} ({bytes} bytes)"));
        }
    }
    Ok(())
}
