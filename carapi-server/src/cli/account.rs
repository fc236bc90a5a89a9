//! `carapi-server account create | rotate | revoke`.

use std::process::ExitCode;

use carapi_sdk::CpfCnpj;
use rust_decimal::Decimal;

use super::keys::KeyArgs;
use carapi_service::contas::{NovaConta, create_conta};

/// Account subcommands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Create an account and print its API key (shown once).
    #[command(name = "criar", alias = "create")]
    Create(CreateArgs),
    /// Give an account a new API key, printed once; the old key is refused from now on (by
    /// running servers within a few seconds, see the server README's "Security").
    #[command(name = "rotacionar", alias = "rotate")]
    Rotate(KeyArgs),
    /// Revoke an account's API key: every request with it is refused (401) from now on (by
    /// running servers within a few seconds); `rotate` gives the account a new one.
    #[command(name = "revogar", alias = "revoke")]
    Revoke(KeyArgs),
}

/// Options of `account create`.
#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// Initial balance in BRL.
    #[arg(long = "saldo", default_value = "100.00")]
    saldo: Decimal,
    /// Put the account on the legacy price table (until its first confirmed top-up).
    #[arg(long = "legado")]
    legado: bool,
    /// CPF/CNPJ of the linked user (masked or bare); default a valid fictitious CPF.
    #[arg(long = "documento", conflicts_with = "sem_documento")]
    documento: Option<String>,
    /// Create the account without a document (top-ups answer DOCUMENTO_AUSENTE).
    #[arg(long = "sem-documento", id = "sem_documento")]
    without_documento: bool,
    /// E-mail of the linked user.
    #[arg(long = "email")]
    email: Option<String>,
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
    /// Print one JSON object with contaId and apiKey.
    #[arg(long = "json")]
    json: bool,
}

pub(super) async fn run(c: Command) -> anyhow::Result<ExitCode> {
    match c {
        Command::Create(a) => create(a).await,
        Command::Rotate(a) => super::keys::rotate(a, true).await,
        Command::Revoke(a) => super::keys::rotate(a, false).await,
    }
}

async fn create(a: CreateArgs) -> anyhow::Result<ExitCode> {
    let padrao = NovaConta::default();
    let documento = if a.without_documento {
        None
    } else if let Some(d) = &a.documento {
        Some(CpfCnpj::parse(d).map_err(|e| anyhow::anyhow!("--documento: {e}"))?)
    } else {
        padrao.documento.clone()
    };
    let nova = NovaConta {
        saldo: a.saldo,
        legado: a.legado,
        documento,
        email: a.email.or(padrao.email),
    };
    let store = a.database.open().await?;
    let conta = create_conta(store.as_ref(), nova).await?;
    if a.json {
        println!("{}", serde_json::to_string(&conta)?);
    } else {
        println!("conta {} criada", conta.conta_id);
        println!("chave de API (mostrada só agora): {}", conta.api_key);
    }
    Ok(ExitCode::SUCCESS)
}
