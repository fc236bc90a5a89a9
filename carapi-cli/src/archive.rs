//! The archive of paid answers as the CLI uses it (`carapi config definir acervo`): where the
//! file is, the policy from the flags and `config.toml`, and how a lookup says where its answer
//! came from.

use std::path::PathBuf;
use std::time::Duration;

use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness, LegalBasis};
use carapi_sdk::{Answer, Origin};

use crate::config::{ConfigFile, Paths};
use crate::error::{CliError, Kind, Result};
use crate::options::ArchiveArgs;

use crate::options::default_max_age;

/// The default maximum age of a reused answer: 30 days ([`default_max_age`]).
pub(crate) const DEFAULT_MAX_AGE: &str = default_max_age!();

/// `config.toml`'s `acervo` value meaning the data directory's `acervo.sqlite3`.
pub(crate) const DEFAULT_WORD: &str = "padrao";
/// `config.toml`'s `acervo` value turning the archive off.
pub(crate) const OFF_WORD: &str = "desligado";

/// The hidden English spelling of [`OFF_WORD`].
const OFF_ALIAS: &str = "off";

/// The archive file configured, if any.
pub(crate) fn configured(cfg: &ConfigFile, paths: &Paths) -> Option<PathBuf> {
    match cfg.archive.as_deref().map(str::trim) {
        None | Some("") | Some(OFF_WORD | OFF_ALIAS) => None,
        Some(DEFAULT_WORD) => Some(paths.data_dir.join(carapi_sdk::archive::DEFAULT_FILE_NAME)),
        Some(p) => Some(PathBuf::from(p)),
    }
}

/// What `carapi config definir acervo VALUE` stores: `padrao`, `desligado` (also for the
/// hidden `off`), a PostgreSQL URL, or an absolute file path: a relative path made absolute
/// (the setting must not depend on the directory the CLI later runs from), an existing folder
/// as its `acervo.sqlite3`.
///
/// # Errors
/// A bare word that is neither a keyword nor an existing folder (`sem`, `nao`: reading it as
/// "off" would silently pay again for what the archive holds, and as a file it would create
/// one in every directory), a file in a folder that does not exist (2); a PostgreSQL URL in a
/// build without the feature (2).
pub(crate) fn setting(value: &str) -> Result<String> {
    let v = value.trim();
    if v == DEFAULT_WORD || v == OFF_WORD {
        return Ok(v.to_owned());
    }
    if v == OFF_ALIAS {
        return Ok(OFF_WORD.to_owned());
    }
    if carapi_sdk::archive::is_postgres_url(v) {
        return if cfg!(feature = "archive-postgres") {
            Ok(v.to_owned())
        } else {
            Err(no_postgres())
        };
    }
    let path = std::path::Path::new(v);
    let absolute = std::path::absolute(path).map_err(|e| CliError::io_at(path, e))?;
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).map_err(|e| CliError::io_at(p, e));
    if absolute.is_dir() {
        let file = canonical(&absolute)?.join(carapi_sdk::archive::DEFAULT_FILE_NAME);
        return Ok(file.display().to_string());
    }
    let bare_word = path.components().count() == 1 && path.extension().is_none();
    if v.is_empty() || bare_word {
        return Err(CliError::usage(format!(
            "{v:?} não é um valor do acervo: nem `{DEFAULT_WORD}`, nem `{OFF_WORD}`, nem uma pasta existente"
        ))
        .hint(format!(
            "carapi config definir acervo {OFF_WORD} (sem acervo), {DEFAULT_WORD} (no diretório de dados), ou um arquivo: ./{v}.sqlite3"
        )));
    }
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) if dir.is_dir() => {
            Ok(canonical(dir)?.join(name).display().to_string())
        }
        _ => Err(
            CliError::usage(format!("a pasta de {} não existe", absolute.display()))
                .hint("crie a pasta antes, ou use carapi config definir acervo padrao"),
        ),
    }
}

/// The PostgreSQL URL `path` holds (`config definir acervo postgres://...`), if it does.
pub(crate) fn postgres_url(path: &std::path::Path) -> Option<&str> {
    path.to_str()
        .filter(|s| carapi_sdk::archive::is_postgres_url(s))
}

/// Opens the archive at `path`: a file, or a team archive in PostgreSQL
/// (`postgres://...`, when this build has the feature `archive-postgres`).
///
/// # Errors
/// When it cannot be opened (exit 1, `ACERVO`); a PostgreSQL URL in a build without it (2).
pub(crate) fn open(path: &std::path::Path) -> Result<Archive> {
    let Some(url) = postgres_url(path) else {
        return Archive::open(path).map_err(|e| {
            CliError::other(
                "ACERVO",
                format!("{}: {}", path.display(), carapi_sdk::error_chain(&e)),
            )
        });
    };
    if !cfg!(feature = "archive-postgres") {
        return Err(no_postgres());
    }
    // The URL may hold a password: the message names the archive, not its address.
    Archive::open_location(url).map_err(|e| {
        CliError::other(
            "ACERVO",
            format!("acervo PostgreSQL: {}", carapi_sdk::error_chain(&e)),
        )
    })
}

/// A PostgreSQL archive asked of a build without it.
pub(crate) fn no_postgres() -> CliError {
    CliError::new(
        Kind::Usage,
        "ACERVO_POSTGRES_AUSENTE",
        "esta compilação do carapi não tem o acervo PostgreSQL (de equipe)",
    )
    .hint("cargo install carapi-cli --features archive-postgres; ou um acervo em arquivo: carapi config definir acervo padrao")
}

/// The archive's location as shown: a file path, or a PostgreSQL URL without its password.
pub(crate) fn shown(value: &str) -> String {
    if !carapi_sdk::archive::is_postgres_url(value) {
        return value.to_owned();
    }
    match url::Url::parse(value.trim()) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "postgres://…".to_owned(),
    }
}

/// The configured archive, for `carapi acervo`.
///
/// # Errors
/// When none is configured (exit 2) or it cannot be opened.
pub(crate) fn open_configured(paths: &Paths) -> Result<Archive> {
    let cfg = ConfigFile::load(paths)?;
    let path = configured(&cfg, paths).ok_or_else(|| {
        CliError::new(Kind::Usage, "SEM_ACERVO", "nenhum acervo configurado")
            .hint("carapi config definir acervo padrao (ou um caminho de arquivo)")
    })?;
    open(&path)
}

/// The policy of a lookup: purpose and legal basis from the flags, else `config.toml`; refused
/// (exit 2, before any request) when either is missing.
///
/// # Errors
/// A missing or blank purpose (`--finalidade`), a missing or unknown legal basis
/// (`--base-legal`), an invalid `--idade-maxima`.
pub(crate) fn policy(cfg: &ConfigFile, args: &ArchiveArgs) -> Result<ArchivePolicy> {
    let purpose = args
        .purpose
        .clone()
        .or_else(|| cfg.purpose.clone())
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            CliError::new(
                Kind::Usage,
                "SEM_FINALIDADE",
                "com o acervo ligado, a finalidade da consulta é obrigatória (LGPD)",
            )
            .hint("--finalidade \"TEXTO\" ou carapi config definir finalidade \"TEXTO\"")
        })?;
    let basis = args
        .legal_basis
        .clone()
        .or_else(|| cfg.legal_basis.clone())
        .ok_or_else(|| {
            CliError::new(Kind::Usage, "SEM_BASE_LEGAL", "com o acervo ligado, a base legal da consulta é obrigatória (LGPD arts. 7 e 11)")
                .hint("--base-legal BASE ou carapi config definir base-legal BASE (ex.: interesse-legitimo)")
        })?;
    let legal_basis = parse_legal_basis(&basis)?;
    let freshness = if args.buy {
        Freshness::Never
    } else {
        let max_age = args.max_age.as_deref().or(cfg.max_age.as_deref());
        Freshness::MaxAge(parse_max_age(max_age.unwrap_or(DEFAULT_MAX_AGE))?)
    };
    Ok(ArchivePolicy::new(purpose.trim(), legal_basis, freshness))
}

/// A legal basis as typed (`--base-legal`).
///
/// # Errors
/// Usage error naming the accepted words.
pub(crate) fn parse_legal_basis(s: &str) -> Result<LegalBasis> {
    s.parse()
        .map_err(|e: carapi_sdk::archive::UnknownLegalBasis| {
            CliError::new(Kind::Usage, "BASE_LEGAL_INVALIDA", e.to_string()).hint("--base-legal")
        })
}

/// A maximum age as typed (`30d`, `12h`, `0` = never reuse).
///
/// # Errors
/// Usage error naming `--idade-maxima`.
pub(crate) fn parse_max_age(s: &str) -> Result<Duration> {
    if s.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    // humantime's own message is English ("time unit needed"): the CLI says it in Portuguese.
    humantime::parse_duration(s.trim()).map_err(|_| {
        CliError::new(
            Kind::Usage,
            "IDADE_MAXIMA_INVALIDA",
            format!("idade máxima inválida {s:?}: use um número e uma unidade (d, h, min, s)"),
        )
        .hint(concat!(
            "--idade-maxima ",
            default_max_age!(),
            ", 12h, 90min; 0 para nunca reaproveitar"
        ))
    })
}

/// `dd/mm/aaaa hh:mm` in Brasília time, as every time a person reads ([`crate::format::brasilia`]).
pub(crate) fn when(t: carapi_sdk::DateTime<carapi_sdk::Utc>) -> String {
    crate::format::brasilia_minutes(t)
}

/// The stderr line of an archived lookup: from the archive (no charge) and when it was bought,
/// or the warning of an answer that could not be archived.
pub(crate) fn provenance<T>(a: &Answer<T>) -> (Option<String>, Option<String>) {
    let status = (a.origin == Origin::Archive).then(|| {
        format!(
            "do acervo, sem cobrança (comprada em {}; --comprar para comprar de novo)",
            when(a.bought_at)
        )
    });
    let warning = a
        .warning
        .as_ref()
        .map(|w| format!("resposta cobrada, mas NÃO arquivada: {w}"));
    (status, warning)
}

/// The JSON of an answer, with where it came from when the archive is on: `origem` (`api` or
/// `acervo`) and `compradoEm` (RFC 3339) added at the top level.
pub(crate) fn json_with_origin<T: serde::Serialize>(
    value: &T,
    origin: Option<&Answer<()>>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    if let (Some(map), Some(a)) = (v.as_object_mut(), origin) {
        map.insert("origem".into(), a.origin.as_str().into());
        map.insert("compradoEm".into(), a.bought_at.to_rfc3339().into());
    }
    v
}

/// Splits an answer into the answer and, when the archive is on (`archived`), its provenance.
pub(crate) fn split<T>(a: Answer<T>, archived: bool) -> (T, Option<Answer<()>>) {
    let (value, origin) = a.into_parts();
    (value, archived.then_some(origin))
}
