//! `carapi recibo CODIGO [--saida PATH] [--force] [-o FORMATO]`: downloads the registration
//! receipt PDF (charged).
//!
//! Default file `<codigoCar>.pdf` in the current directory; `--saida DIR` saves `<codigoCar>.pdf`
//! inside `DIR`; `--saida -` writes the PDF to stdout. `-o` is the format of the report of what
//! was saved, as in every other command. An existing file is never overwritten without
//! `--force`, and that is checked **before** the request, so a refusal costs nothing. The PDF is
//! streamed into a hidden temporary file next to the target and renamed when complete (never a
//! half file), with a progress bar on stderr.

use std::io::Write;
use std::path::{Path, PathBuf};

use carapi_sdk::CodigoCar;
use serde::Serialize;

use crate::cli::FormatoArgs;
use crate::context::Context;
use crate::error::{CliError, Result};
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
    #[arg(long)]
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
/// # Errors
/// File exists without `--force` (1, `ARQUIVO_EXISTE`, nothing charged), invalid code (2),
/// 401 (3), 402 (5), 404 (4), 429 (6), 5xx/network (7).
pub async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let codigo = CodigoCar::parse(&args.codigo).map_err(carapi_sdk::Error::from)?;
    let nome = format!("{}.pdf", codigo.as_str());
    let destino = match &args.arquivo {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) if p.is_dir() => Some(p.join(&nome)),
        Some(p) => Some(p.clone()),
        None => Some(PathBuf::from(&nome)),
    };
    if let Some(d) = destino.as_ref().filter(|d| d.exists() && !args.force) {
        return Err(
            CliError::other("ARQUIVO_EXISTE", format!("{} já existe", d.display())).hint(
                "use --force para sobrescrever, ou --saida ARQUIVO para outro arquivo (nada foi cobrado)",
            ),
        );
    }
    let formato = ctx.formato(args.formato);
    if args.abrir && destino.is_none() {
        return Err(CliError::usage(
            "--abrir precisa de um arquivo: não use com --saida -",
        ));
    }
    let client = ctx.client().await?;
    let mut download = client.recibo_download(codigo.as_str()).await?;
    let pb = ctx.shell.progress(
        download.content_length().unwrap_or(0),
        "{spinner} recibo [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
    );
    let Some(destino) = destino else {
        while let Some(chunk) = download.chunk().await? {
            pb.inc(chunk.len() as u64);
            ctx.shell.out().write_all(&chunk)?;
        }
        pb.finish_and_clear();
        ctx.mostrar_cobranca(codigo.is_sandbox(), |p| p.recibo);
        return Ok(ctx.shell.out().flush()?);
    };
    let temp = temp_path(&destino);
    let result = async {
        let mut file = std::fs::File::create(&temp).map_err(|e| CliError::io_at(&temp, e))?;
        let mut bytes = 0u64;
        while let Some(chunk) = download.chunk().await? {
            file.write_all(&chunk)
                .map_err(|e| CliError::io_at(&temp, e))?;
            bytes += chunk.len() as u64;
            pb.set_position(bytes);
        }
        file.sync_all().map_err(|e| CliError::io_at(&temp, e))?;
        drop(file);
        std::fs::rename(&temp, &destino).map_err(|e| CliError::io_at(&destino, e))?;
        Ok::<u64, CliError>(bytes)
    }
    .await;
    pb.finish_and_clear();
    let bytes = match result {
        Ok(b) => b,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
    };
    ctx.mostrar_cobranca(codigo.is_sandbox(), |p| p.recibo);
    if args.abrir
        && let Err(e) = opener::open(&destino)
    {
        ctx.shell.warn(format!(
            "não foi possível abrir {} no visualizador: {}",
            destino.display(),
            match &e {
                opener::OpenError::Io(io) => crate::estrangeiros::io(io),
                _ => "nenhum visualizador de PDF respondeu".to_owned(),
            }
        ));
    }
    let arquivo = destino.display().to_string();
    match formato {
        Formato::Json => ctx.shell.json(&Salvo {
            codigo_car: codigo.as_str(),
            arquivo,
            bytes,
        })?,
        Formato::Csv => {
            ctx.shell.line("codigoCar,arquivo,bytes")?;
            let mut w = csv::Writer::from_writer(vec![]);
            let _ = w.write_record([codigo.as_str(), &arquivo, &bytes.to_string()]);
            let row = w.into_inner().unwrap_or_default();
            ctx.shell.out().write_all(&row)?;
        }
        Formato::Table | Formato::Geojson => {
            ctx.shell.line(&arquivo)?;
            ctx.shell
                .note(format!("Recibo salvo em {arquivo} ({bytes} bytes)"));
        }
    }
    Ok(())
}

fn temp_path(destino: &Path) -> PathBuf {
    let dir = destino
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let nome = destino
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!(".{nome}.{}.part", std::process::id()))
}
