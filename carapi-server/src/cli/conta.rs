//! `carapi-server account create | rotate | revoke`.

use std::process::ExitCode;

use carapi_sdk::CpfCnpj;
use rust_decimal::Decimal;

use super::keys::KeyArgs;
use carapi_service::contas::{NovaConta, create_conta};

/// Subcomandos de conta.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Cria uma conta e mostra sua chave de API (mostrada uma só vez).
    #[command(name = "criar", alias = "create")]
    Create(CreateArgs),
    /// Dá a uma conta uma chave de API nova, mostrada uma só vez; a chave antiga é recusada a
    /// partir de agora (pelos servidores em execução em poucos segundos, veja a seção
    /// "Security" do README do servidor).
    #[command(name = "rotacionar", alias = "rotate")]
    Rotate(KeyArgs),
    /// Revoga a chave de API de uma conta: toda requisição com ela é recusada (401) a partir de
    /// agora (pelos servidores em execução em poucos segundos); `rotate` dá à conta uma nova.
    #[command(name = "revogar", alias = "revoke")]
    Revoke(KeyArgs),
}

/// Opções de `account create`.
#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// Saldo inicial em reais: 200, 200,00, 1.500,00 ou 200.00 (como no `carapi`); formas
    /// ambíguas como 1.500 ou 1,500 são recusadas.
    #[arg(long = "saldo", default_value = "100,00", value_parser = carapi_sdk::domain::brl::parse_reais)]
    saldo: Decimal,
    /// Põe a conta na tabela de preços legada (até sua primeira recarga confirmada).
    #[arg(long = "legado")]
    legado: bool,
    /// CPF/CNPJ do usuário vinculado (com ou sem máscara); padrão: um CPF fictício válido.
    #[arg(long = "documento", conflicts_with = "sem_documento")]
    documento: Option<String>,
    /// Cria a conta sem documento (recargas respondem DOCUMENTO_AUSENTE).
    #[arg(long = "sem-documento", id = "sem_documento")]
    without_documento: bool,
    /// E-mail do usuário vinculado.
    #[arg(long = "email")]
    email: Option<String>,
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
    /// Mostra um objeto JSON com contaId e apiKey.
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
    let pattern = NovaConta::default();
    let documento = if a.without_documento {
        None
    } else if let Some(d) = &a.documento {
        Some(CpfCnpj::parse(d).map_err(|e| anyhow::anyhow!("--documento: {e}"))?)
    } else {
        pattern.documento.clone()
    };
    let fresh = NovaConta {
        saldo: a.saldo,
        legado: a.legado,
        documento,
        email: a.email.or(pattern.email),
    };
    let store = a.database.open().await?;
    let conta = create_conta(store.as_ref(), fresh).await?;
    if a.json {
        println!("{}", serde_json::to_string(&conta)?);
    } else {
        println!("conta {} criada", conta.conta_id);
        println!("chave de API (mostrada só agora): {}", conta.api_key);
    }
    Ok(ExitCode::SUCCESS)
}
