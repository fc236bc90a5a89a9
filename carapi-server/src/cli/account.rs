//! `carapi-server account create`.

use std::process::ExitCode;

use anyhow::Context;
use carapi_sdk::CpfCnpj;
use rust_decimal::Decimal;

use crate::contas::{NovaConta, criar_conta};
use crate::startup::abrir_store;

/// Account subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Comando {
    /// Create an account and print its API key (shown once).
    Create(CreateArgs),
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
    let Comando::Create(a) = c;
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
