//! `account rotate` and `account revoke`: an account's key replaced in the store.
//!
//! Revoking stores a hash no key has (`revogada:` and a random UUID, never a hex SHA-256), so
//! the account stays (balance, history) while no key opens it; rotating stores the hash of a
//! new key. Running servers keep a key -> account cache whose entries expire after
//! `carapi_service::cache::KEY_TTL`, so every process, on any store, refuses the old key
//! within that time.

use std::process::ExitCode;

use anyhow::Context;

use carapi_service::auth;
use carapi_service::store::postgres::is_postgres_url;
use carapi_service::store::{ContaId, OpenMode, PgStore, SqliteStore, StoreError};

/// Opções de `account rotate` e `account revoke`.
#[derive(Debug, clap::Args)]
pub(crate) struct KeyArgs {
    /// A conta (seu contaId).
    #[arg(long = "conta")]
    conta: i64,
    #[command(flatten)]
    database: super::DatabaseArgs,
    /// Mostra um objeto JSON (contaId, e apiKey em `rotate`).
    #[arg(long = "json")]
    json: bool,
}

impl KeyArgs {
    /// The account id, database URL and `--json` flag.
    fn parts(&self) -> (ContaId, &str, bool) {
        (ContaId(self.conta), &self.database.database, self.json)
    }
}

/// Rotates (`nova` true: a new key, printed once) or revokes the key of `a`'s account.
pub(super) async fn rotate(a: KeyArgs, fresh: bool) -> anyhow::Result<ExitCode> {
    let (id, url, json) = a.parts();
    let chave = fresh.then(auth::generate_key);
    let hash = match &chave {
        Some(k) => auth::key_hash(k),
        None => format!("revogada:{}", uuid::Uuid::new_v4()),
    };
    let swapped = write(url, id, &hash).await.context("gravando a chave")?;
    if !swapped {
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

async fn write(url: &str, id: ContaId, hash: &str) -> Result<bool, StoreError> {
    if is_postgres_url(url) {
        let store = PgStore::open(url, OpenMode::Existing).await?;
        store.rotate_key(id, hash).await
    } else {
        let store = SqliteStore::open(url, OpenMode::Existing).await?;
        let r = store.rotate_key(id, hash).await;
        store.close().await;
        r
    }
}
