//! `carapi config mostrar` and `carapi config definir base-url URL`.

use serde::Serialize;

use crate::config::{ConfigFile, parse_base_url};
use crate::context::Context;
use crate::credentials;
use crate::error::Result;
use crate::format::{CellValue, Fields};
use crate::options::FormatArgs;
use crate::output::OutputFormat;

/// Arguments of `carapi config`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Sub,
}

/// Subcommands of `carapi config`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Mostra a configuração efetiva e de onde vem (a chave nunca é mostrada)
    #[command(name = "mostrar", alias = "show")]
    Show {
        /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Altera um valor do arquivo de configuração
    #[command(name = "definir", alias = "set")]
    Set {
        /// O que alterar
        // The id of a positional is the label zsh's completion shows: Portuguese, as users read it.
        #[arg(id = "chave", value_enum, value_name = "CHAVE")]
        key: ConfigKey,
        /// O novo valor
        valor: String,
    },
}

/// Settable keys.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ConfigKey {
    /// URL base da API
    BaseUrl,
    /// Acervo das respostas pagas: `padrao` (no diretório de dados), um caminho de arquivo (guardado absoluto) ou de pasta existente, uma URL `postgres://...` (acervo de equipe), ou `desligado`
    Acervo,
    /// Finalidade registrada com cada consulta arquivada
    Finalidade,
    /// Base legal registrada com cada consulta arquivada (LGPD arts. 7 e 11)
    BaseLegal,
    /// Idade máxima de uma resposta do acervo para ser reaproveitada (ex.: 30d)
    IdadeMaxima,
}

/// What `carapi config mostrar` shows; its JSON names are the output's (`baseUrlOrigem`,
/// `chaveConfigurada`, `chaveOrigem`, ...).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown {
    config_file: String,
    base_url: Option<String>,
    #[serde(rename = "baseUrlOrigem")]
    base_url_source: Option<&'static str>,
    #[serde(rename = "chaveConfigurada")]
    key_configured: bool,
    #[serde(rename = "chaveOrigem")]
    key_source: Option<String>,
    data_dir: String,
    local: bool,
    /// The archive as configured (a PostgreSQL URL without its password), `None` when off.
    #[serde(rename = "acervo")]
    archive: Option<String>,
    /// The purpose recorded with each archived lookup.
    #[serde(rename = "finalidade")]
    purpose: Option<String>,
    /// The legal basis recorded with each archived lookup.
    #[serde(rename = "baseLegal")]
    legal_basis: Option<String>,
    /// How old an archived answer may be to be reused.
    #[serde(rename = "idadeMaxima")]
    max_age: String,
}

/// Runs `carapi config`.
///
/// # Errors
/// Invalid URL (2), unreadable config (1).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    match args.command {
        Sub::Set {
            key: ConfigKey::BaseUrl,
            valor,
        } => {
            let url = parse_base_url(&valor)?;
            let mut cfg = ConfigFile::load(&ctx.paths)?;
            cfg.base_url = Some(url.clone());
            let path = cfg.save(&ctx.paths)?;
            ctx.shell
                .note(format!("base-url = {url} (em {})", path.display()));
            if ctx.global.base_url.is_some() {
                ctx.shell.warn(
                    "--url-base/CARAPI_BASE_URL tem precedência sobre o arquivo de configuração",
                );
            }
            Ok(())
        }
        Sub::Set { key, valor } => set_archive_key(ctx, key, &valor),
        Sub::Show { format } => show(ctx, format),
    }
}

/// `carapi config mostrar`: the effective configuration and where each value comes from.
///
/// # Errors
/// An unreadable config (1); write errors.
fn show(ctx: &mut Context, format: FormatArgs) -> Result<()> {
    let format = ctx.format(format);
    let (base_url, source) = match ctx.base_url() {
        Ok((u, o)) => (Some(u), Some(o)),
        Err(_) => (None, None),
    };
    let cred = credentials::resolve(&ctx.paths)?;
    let cfg = ConfigFile::load(&ctx.paths)?;
    let archive = crate::archive::configured(&cfg, &ctx.paths)
        .map(|p| crate::archive::shown(&p.display().to_string()));
    let m = Shown {
        archive,
        purpose: cfg.purpose.clone(),
        legal_basis: cfg.legal_basis.clone(),
        max_age: cfg
            .max_age
            .clone()
            .unwrap_or_else(|| format!("{} (padrão)", crate::archive::DEFAULT_MAX_AGE)),
        config_file: ctx.paths.config_file().display().to_string(),
        base_url,
        base_url_source: source,
        key_configured: cred.is_some(),
        key_source: cred.map(|c| c.source.to_string()),
        data_dir: ctx.paths.data_dir.display().to_string(),
        local: ctx.global.local,
    };
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(&m)?);
    }
    Ok(ctx.shell.fields(&shown_fields(&m), format)?)
}

/// [`Shown`] as labelled fields.
fn shown_fields(m: &Shown) -> Fields {
    let mut c = Fields::new();
    c.add(
        "configFile",
        "Arquivo de configuração",
        CellValue::text(&m.config_file),
    )
    .add(
        "baseUrl",
        "URL base",
        CellValue::optional(m.base_url.as_deref()),
    )
    .add(
        "baseUrlOrigem",
        "Origem da URL",
        CellValue::optional(m.base_url_source),
    )
    .add(
        "chaveOrigem",
        "Chave da API",
        match &m.key_source {
            Some(o) => CellValue {
                human: format!("configurada ({o})"),
                raw: o.clone(),
            },
            None => CellValue {
                human: "não configurada (carapi login)".into(),
                raw: String::new(),
            },
        },
    )
    .add(
        "dataDir",
        "Diretório de dados",
        CellValue::text(&m.data_dir),
    )
    .add("local", "Modo local", CellValue::boolean(m.local))
    .add(
        "acervo",
        "Acervo",
        CellValue::optional(m.archive.as_deref().or(Some("desligado"))),
    )
    .add(
        "finalidade",
        "Finalidade",
        CellValue::optional(m.purpose.as_deref()),
    )
    .add(
        "baseLegal",
        "Base legal",
        CellValue::optional(m.legal_basis.as_deref()),
    )
    .add("idadeMaxima", "Idade máxima", CellValue::text(&m.max_age));
    c
}

/// `carapi config definir acervo|finalidade|base-legal|idade-maxima VALOR`.
///
/// # Errors
/// An unknown legal basis or invalid maximum age (2); config file errors (1).
fn set_archive_key(ctx: &mut Context, key: ConfigKey, valor: &str) -> Result<()> {
    let mut cfg = ConfigFile::load(&ctx.paths)?;
    let valor = valor.trim().to_owned();
    let (name, valor) = match key {
        ConfigKey::BaseUrl | ConfigKey::Acervo => {
            let stored = crate::archive::setting(&valor)?;
            cfg.archive = Some(stored.clone());
            ("acervo", stored)
        }
        ConfigKey::Finalidade => {
            cfg.purpose = Some(valor.clone());
            ("finalidade", valor)
        }
        ConfigKey::BaseLegal => {
            crate::archive::parse_legal_basis(&valor)?;
            cfg.legal_basis = Some(valor.clone());
            ("base-legal", valor)
        }
        ConfigKey::IdadeMaxima => {
            crate::archive::parse_max_age(&valor)?;
            cfg.max_age = Some(valor.clone());
            ("idade-maxima", valor)
        }
    };
    let path = cfg.save(&ctx.paths)?;
    let shown = crate::archive::shown(&valor);
    ctx.shell
        .note(format!("{name} = {shown} (em {})", path.display()));
    Ok(())
}
