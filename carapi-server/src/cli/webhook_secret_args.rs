//! The webhook secret's options, shared by `servir`, `pix pagar` and `segredo-webhook` so that
//! the tools sign with (and print) the secret the server uses.

/// `--segredo-webhook` (`CARAPI_WEBHOOK_SECRET`) ou `--arquivo-segredo-webhook`
/// (`CARAPI_WEBHOOK_SECRET_FILE`); nenhum dos dois: o segredo do próprio banco.
#[derive(Debug, clap::Args)]
pub(crate) struct WebhookSecretArgs {
    /// Segredo HMAC-SHA256 de POST /webhooks/pix, com 32 bytes ou mais. Sem ele (e sem
    /// --arquivo-segredo-webhook), o segredo aleatório do próprio banco, gerado no primeiro
    /// início de `servir` (mostre-o com `carapi-server segredo-webhook`). Prefira a variável de
    /// ambiente ou --arquivo-segredo-webhook: um valor na linha de comando fica visível a todo
    /// usuário local em /proc/*/cmdline.
    #[arg(
        long = "segredo-webhook",
        id = "webhook_secret",
        value_name = "SEGREDO",
        alias = "webhook-secret",
        env = "CARAPI_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    webhook_secret: Option<String>,
    /// Arquivo com o segredo HMAC-SHA256 de POST /webhooks/pix (32 bytes ou mais; uma quebra de
    /// linha final é ignorada).
    #[arg(
        long = "arquivo-segredo-webhook",
        value_name = "ARQUIVO",
        alias = "webhook-secret-file",
        env = "CARAPI_WEBHOOK_SECRET_FILE",
        conflicts_with = "webhook_secret"
    )]
    webhook_secret_file: Option<std::path::PathBuf>,
}

impl WebhookSecretArgs {
    /// The configured secret: from `--arquivo-segredo-webhook`, else from `--segredo-webhook` /
    /// `CARAPI_WEBHOOK_SECRET` (with a warning on stderr when it came on the command line);
    /// `None` when neither is given or the value is blank (the database's secret is meant).
    ///
    /// # Errors
    /// The message for stderr when the file cannot be read or the secret is shorter than
    /// `carapi_service::pix::webhook::MIN_SECRET_LEN` bytes.
    pub(crate) fn resolve(&self) -> Result<Option<String>, String> {
        let secret = if let Some(file) = &self.webhook_secret_file {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("--arquivo-segredo-webhook {}: {e}", file.display()))?;
            let text = text.strip_suffix('\n').unwrap_or(&text);
            Some(text.strip_suffix('\r').unwrap_or(text).to_owned())
        } else {
            let from_env = std::env::var("CARAPI_WEBHOOK_SECRET").ok();
            if self.webhook_secret.is_some() && self.webhook_secret != from_env {
                eprintln!(
                    "aviso: --segredo-webhook fica visível a todo usuário local em \
                     /proc/*/cmdline; use CARAPI_WEBHOOK_SECRET ou --arquivo-segredo-webhook"
                );
            }
            self.webhook_secret.clone()
        };
        carapi_service::pix::webhook::validate_secret(secret.as_deref())
            .map_err(|e| e.to_string())?;
        Ok(secret.filter(|s| !s.trim().is_empty()))
    }
}
