//! Where the CLI keeps its files, and the configuration file.
//!
//! - Configuration directory: `CARAPI_CONFIG_DIR`, else the platform's (`~/.config/carapi` on
//!   Linux, `~/Library/Application Support/br.carapi.carapi` on macOS, `%APPDATA%\carapi\carapi\config`
//!   on Windows). Holds `config.toml` and, only where no keyring works, `credentials` (mode 0600).
//! - Data directory: `CARAPI_DATA_DIR`, else the platform's (`~/.local/share/carapi` on Linux).
//!   Holds the local mode's store `local/carapi.sqlite3` and its key `local/api-key` (0600).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{CliError, Result};

/// The CLI's directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paths {
    /// Configuration directory (`config.toml`, `credentials`).
    config_dir: PathBuf,
    /// Data directory (local mode store).
    pub(crate) data_dir: PathBuf,
}

impl Paths {
    /// Resolves the directories from `CARAPI_CONFIG_DIR` / `CARAPI_DATA_DIR` or the platform's.
    ///
    /// # Errors
    /// When there is no home directory and no override.
    pub(crate) fn resolve() -> Result<Paths> {
        let dirs = directories::ProjectDirs::from("br", "carapi", "carapi");
        let pick = |var: &str, f: fn(&directories::ProjectDirs) -> &Path| -> Result<PathBuf> {
            match std::env::var_os(var).filter(|v| !v.is_empty()) {
                Some(v) => Ok(PathBuf::from(v)),
                None => dirs.as_ref().map(|d| f(d).to_path_buf()).ok_or_else(|| {
                    CliError::other("CONFIG", "diretório do usuário não encontrado")
                        .hint(format!("defina {var} com um diretório"))
                }),
            }
        };
        Ok(Paths {
            config_dir: pick("CARAPI_CONFIG_DIR", directories::ProjectDirs::config_dir)?,
            data_dir: pick("CARAPI_DATA_DIR", directories::ProjectDirs::data_dir)?,
        })
    }

    /// Removes what earlier versions of the CLI left in the data directory and no longer use:
    /// the price cache `precos/` (one file per server and key; the SDK now learns the account's
    /// prices itself). Best effort: a failure leaves the files, harmless.
    pub(crate) fn remove_legacy(&self) {
        let _ = std::fs::remove_dir_all(self.data_dir.join("precos"));
    }

    /// `config.toml`.
    pub(crate) fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// The fallback credentials file (0600).
    pub(crate) fn credentials_file(&self) -> PathBuf {
        self.config_dir.join("credentials")
    }

    /// The local mode's directory.
    #[cfg(feature = "local")]
    pub(crate) fn local_dir(&self) -> PathBuf {
        self.data_dir.join("local")
    }
}

/// The contents of `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct ConfigFile {
    /// Base URL of the API (`carapi config definir base-url URL`); `--url-base`/`CARAPI_BASE_URL` win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) base_url: Option<String>,
    /// The archive of paid answers: a file path, or `padrao` (`<data dir>/acervo.sqlite3`);
    /// absent or `desligado`: no archive.
    #[serde(default, rename = "acervo", skip_serializing_if = "Option::is_none")]
    pub(crate) archive: Option<String>,
    /// The purpose recorded with every archived lookup (`--finalidade` wins).
    #[serde(
        default,
        rename = "finalidade",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) purpose: Option<String>,
    /// The legal basis recorded with every archived lookup (`--base-legal` wins).
    #[serde(
        default,
        rename = "base-legal",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) legal_basis: Option<String>,
    /// How old an archived answer may be to be reused (`--idade-maxima` wins; default 30 days).
    #[serde(
        default,
        rename = "idade-maxima",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) max_age: Option<String>,
}

impl ConfigFile {
    /// Reads `config.toml`; a missing file is the default configuration.
    ///
    /// # Errors
    /// When the file exists but cannot be read or parsed.
    pub(crate) fn load(paths: &Paths) -> Result<ConfigFile> {
        let path = paths.config_file();
        match fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
                tracing::debug!("config.toml: {e}");
                let line = e
                    .span()
                    .map_or(1, |s| text[..s.start].matches('\n').count() + 1);
                CliError::other(
                    "CONFIG",
                    format!("{}: TOML inválido na linha {line}", path.display()),
                )
                .hint("corrija o arquivo ou apague-o e use carapi config definir")
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
            Err(e) => Err(CliError::io_at(&path, e)),
        }
    }

    /// Writes `config.toml` (creating the directory).
    ///
    /// # Errors
    /// File-system errors.
    pub(crate) fn save(&self, paths: &Paths) -> Result<PathBuf> {
        let path = paths.config_file();
        let text =
            toml::to_string_pretty(self).map_err(|e| CliError::other("CONFIG", e.to_string()))?;
        write_private(&path, text.as_bytes())?;
        Ok(path)
    }
}

/// Validates a base URL typed by a person: `http(s)://host[:port][/path]`, no trailing slash kept.
///
/// # Errors
/// Usage error when it is not an http(s) URL.
pub(crate) fn parse_base_url(input: &str) -> Result<String> {
    let url = url::Url::parse(input.trim()).map_err(|e| {
        CliError::usage(format!(
            "URL inválida {input:?}: {}",
            crate::foreign_errors::url(e)
        ))
        .hint("ex.: https://api.exemplo.com.br")
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(CliError::usage(format!(
            "URL inválida {input:?}: use http:// ou https://"
        )));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// Writes `bytes` to `path` atomically (temp file + rename) with mode 0600 on Unix, creating the
/// parent directory (0700 on Unix).
///
/// # Errors
/// File-system errors.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("arquivo"),
        std::process::id()
    ));
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let result = (|| {
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        CliError::io_at(path, e)
    })
}

/// Creates `dir` (and parents), mode 0700 on Unix for a new directory.
///
/// # Errors
/// File-system errors.
pub(crate) fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(|e| CliError::io_at(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        assert_eq!(
            parse_base_url("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            parse_base_url("https://api.x.com.br/base/").unwrap(),
            "https://api.x.com.br/base"
        );
        assert!(parse_base_url("ftp://x").is_err());
        assert!(parse_base_url("nada").is_err());
    }

    #[test]
    fn config_round_trip_and_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_dir: dir.path().join("cfg"),
            data_dir: dir.path().join("data"),
        };
        assert_eq!(ConfigFile::load(&paths).unwrap(), ConfigFile::default());
        let c = ConfigFile {
            base_url: Some("http://x:1".into()),
            ..ConfigFile::default()
        };
        let path = c.save(&paths).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "base-url = \"http://x:1\"\n"
        );
        assert_eq!(ConfigFile::load(&paths).unwrap(), c);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }
}
