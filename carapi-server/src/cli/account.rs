//! `carapi-server account create | rotate | revoke`.

use std::process::ExitCode;

use anyhow::Context;
use carapi_sdk::CpfCnpj;
use rust_decimal::Decimal;

use super::chaves::ChaveArgs;
use carapi_service::contas::{NovaConta, criar_conta};
use carapi_service::startup::abrir_store;

/// Account subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Comando {
    /// Create an account and print its API key (shown once).
    Create(CreateArgs),
    /// Give an account a new API key, printed once; the old key is refused from now on (by
    /// running servers within a few seconds, see the server README's "Security").
    Rotate(ChaveArgs),
    /// Revoke an account's API key: every request with it is refused (401) from now on (by
    /// running servers within a few seconds); `rotate` gives the account a new one.
    Revoke(ChaveArgs),
}

/// Options of `account create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// Initial balance in BRL.
    #[arg(long, default_value = "100.00")]
    saldo: Decimal,
    /// Put the account on the legacy price table (until its first confirmed top-up).
    #[arg(long)]
    legado: bool,
    /// CPF/CNPJ of the linked user (masked or bare); default a valid fictitious CPF.
    #[arg(long, conflicts_with = "sem_documento")]
    documento: Option<String>,
    /// Create the account without a document (top-ups answer DOCUMENTO_AUSENTE).
    #[arg(long)]
    sem_documento: bool,
    /// E-mail of the linked user.
    #[arg(long)]
    email: Option<String>,
    #[command(flatten)]
    banco: super::Banco,
    /// Print one JSON object with contaId and apiKey.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(c: Comando) -> anyhow::Result<ExitCode> {
    match c {
        Comando::Create(a) => criar(a).await,
        Comando::Rotate(a) => super::chaves::trocar(a, true).await,
        Comando::Revoke(a) => super::chaves::trocar(a, false).await,
    }
}

async fn criar(a: CreateArgs) -> anyhow::Result<ExitCode> {
    let padrao = NovaConta::default();
    let documento = if a.sem_documento {
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
    let store = abrir_store(&a.banco.database)
        .await
        .context("abrindo o banco")?;
    let conta = criar_conta(store.as_ref(), nova).await?;
    if a.json {
        println!("{}", serde_json::to_string(&conta)?);
    } else {
        println!("conta {} criada", conta.conta_id);
        println!("chave de API (mostrada só agora): {}", conta.api_key);
    }
    Ok(ExitCode::SUCCESS)
}
