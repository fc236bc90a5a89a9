//! `carapi login [--chave-stdin]`: stores the API key (OS keyring, else a 0600 file).
//!
//! The key is read from a hidden prompt, or from stdin with `--chave-stdin` (scripts:
//! `printf %s "$KEY" | carapi login --chave-stdin`); it never appears on the command line or in
//! any output. When a base URL is configured the key is checked with `GET /v1/saldo` (free) first:
//! a key the server rejects (401) is not stored. A base URL given with `--url-base` is saved in
//! `config.toml` with the key (as `gh auth login --hostname` does), so the next command reaches
//! the same server.

use std::io::Read;

use crate::config::ConfigFile;
use crate::context::Context;
use crate::credentials::{self, Stored};
use crate::error::{CliError, Kind, Result};

/// Arguments of `carapi login`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Lê a chave do stdin (para scripts) em vez de perguntar
    #[arg(long = "chave-stdin", alias = "with-key-stdin")]
    with_key_stdin: bool,
}

/// Runs `carapi login`.
///
/// # Errors
/// No terminal and no `--chave-stdin` (2), empty key (2), key rejected (3), storage failure (1).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    if ctx.global.local {
        return Err(CliError::usage(
            "o modo local usa a própria conta local; login não se aplica",
        ));
    }
    let key = if args.with_key_stdin {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| {
            CliError::other("ES", format!("stdin: {}", crate::foreign_errors::io(&e)))
        })?;
        s
    } else if ctx.shell.can_prompt() {
        dialoguer::Password::new()
            .with_prompt("Chave da API")
            .report(false)
            .interact()
            .map_err(|e| {
                let dialoguer::Error::IO(io) = &e;
                CliError::other(
                    "ES",
                    format!("leitura da chave: {}", crate::foreign_errors::io(io)),
                )
            })?
    } else {
        return Err(CliError::usage("sem terminal para perguntar a chave")
            .hint("printf %s \"$CHAVE\" | carapi login --chave-stdin"));
    };
    let key = key.trim().to_owned();
    if key.is_empty() || key.chars().any(char::is_whitespace) {
        return Err(CliError::usage("chave vazia ou inválida"));
    }
    let url_from_flag = match ctx.base_url() {
        Ok((u, "--url-base")) => Some(u),
        _ => None,
    };
    verify(ctx, &key).await?;
    // The key this login replaces (not CARAPI_API_KEY's): a rotation links the two in the archive.
    let previous = credentials::resolve(&ctx.paths)
        .ok()
        .flatten()
        .filter(|c| !matches!(c.source, credentials::KeySource::Env));
    save_key(ctx, &key)?;
    if let Some(old) = previous {
        crate::commands::acervo::link_after_login(ctx, &old.key, &key).await;
    }
    if let Some(u) = url_from_flag {
        let mut cfg = ConfigFile::load(&ctx.paths)?;
        if cfg.base_url.as_deref() != Some(u.as_str()) {
            cfg.base_url = Some(u.clone());
            let file = cfg.save(&ctx.paths)?;
            ctx.shell
                .note(format!("URL base {u} gravada em {}.", file.display()));
        }
    }
    Ok(())
}

/// Checks the key with `GET /v1/saldo` when a base URL is known: a 401 refuses it.
async fn verify(ctx: &mut Context, key: &str) -> Result<()> {
    match ctx.base_url() {
        Ok((base_url, _)) => {
            let client = carapi_sdk::Client::builder()
                .base_url(&base_url)
                .api_key(key)
                .build()?;
            match client.saldo().await {
                Ok(s) => ctx.shell.note(format!(
                    "Chave válida em {base_url}. Saldo: {}",
                    carapi_sdk::domain::brl::format(s.saldo_reais)
                )),
                Err(e) if e.status() == Some(401) => {
                    let e: CliError = e.into();
                    return Err(CliError::new(
                        Kind::Auth,
                        e.code,
                        format!("chave recusada pelo servidor: {}", e.message),
                    )
                    .hint("confira a chave no painel da conta; nada foi guardado"));
                }
                Err(e) => ctx.shell.warn(format!(
                    "não foi possível verificar a chave ({}); guardando mesmo assim",
                    crate::error::message(&e)
                )),
            }
        }
        Err(_) => ctx.shell.warn(
            "URL base não configurada: a chave não foi verificada (carapi config definir base-url URL)",
        ),
    }
    Ok(())
}

/// Stores the key (keyring, else the 0600 file) and says where.
fn save_key(ctx: &mut Context, key: &str) -> Result<()> {
    match credentials::store(&ctx.paths, key)? {
        Stored::Keyring => ctx.shell.note("Chave guardada no chaveiro do sistema."),
        Stored::File(path, why) => ctx.shell.warn(format!(
            "chaveiro do sistema indisponível ({why}); chave guardada em {} (permissão 0600)",
            path.display()
        )),
    }
    if std::env::var_os("CARAPI_API_KEY").is_some() {
        ctx.shell
            .warn("CARAPI_API_KEY está definida e tem precedência sobre a chave guardada");
    }
    Ok(())
}
