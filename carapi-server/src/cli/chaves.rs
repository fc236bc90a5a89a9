//! `account rotate` and `account revoke`: an account's key replaced in the store.
//!
//! Revoking stores a hash no key has (`revogada:` and a random UUID, never a hex SHA-256), so
//! the account stays (balance, history) while no key opens it; rotating stores the hash of a
//! new key. Running servers keep a key -> account cache whose entries expire after
//! [`carapi_service::cache::VALIDADE_CHAVE`], so every process, on any store, refuses the old key
//! within that time.

use std::process::ExitCode;

use anyhow::Context;

use carapi_service::auth;
use carapi_service::store::postgres::eh_url_postgres;
use carapi_service::store::{ContaId, PgStore, SqliteStore, StoreError};

/// Options of `account rotate` and `account revoke`.
#[derive(Debug, clap::Args)]
pub struct ChaveArgs {
    /// The account (its contaId).
    #[arg(long)]
    conta: i64,
    #[command(flatten)]
    banco: super::Banco,
    /// Print one JSON object (contaId, and apiKey for `rotate`).
    #[arg(long)]
    json: bool,
}

impl ChaveArgs {
    /// The account id, database URL and `--json` flag.
    fn partes(&self) -> (ContaId, &str, bool) {
        (ContaId(self.conta), &self.banco.database, self.json)
    }
}

/// Rotates (`nova` true: a new key, printed once) or revokes the key of `a`'s account.
pub(super) async fn trocar(a: ChaveArgs, nova: bool) -> anyhow::Result<ExitCode> {
    let (id, url, json) = a.partes();
    let chave = nova.then(auth::gerar_chave);
    let hash = match &chave {
        Some(k) => auth::hash_chave(k),
        None => format!("revogada:{}", uuid::Uuid::new_v4()),
    };
    let trocada = gravar(url, id, &hash).await.context("gravando a chave")?;
    if !trocada {
        eprintln!("erro: conta {id} não existe");
        return Ok(ExitCode::FAILURE);
    }
    match (chave, json) {
        (Some(k), true) => println!("{}", serde_json::json!({"contaId": id.0, "apiKey": k})),
        (Some(k), false) => {
            println!("conta {id}: chave antiga recusada a partir de agora");
            println!("chave de API nova (mostrada só agora): {k}");
        }
        (None, true) => println!("{}", serde_json::json!({"contaId": id.0})),
        (None, false) => println!("conta {id}: chave revogada"),
    }
    Ok(ExitCode::SUCCESS)
}

async fn gravar(url: &str, id: ContaId, hash: &str) -> Result<bool, StoreError> {
    if eh_url_postgres(url) {
        let store = PgStore::connect(url).await?;
        store.trocar_chave(id, hash).await
    } else {
        let store = SqliteStore::connect(url).await?;
        let r = store.trocar_chave(id, hash).await;
        store.close().await;
        r
    }
}
