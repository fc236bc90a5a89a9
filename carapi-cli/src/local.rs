//! Local mode: the reference server (`carapi-service` library) in this process, on an ephemeral
//! loopback port, over a persistent SQLite store in the user's data directory.
//!
//! Files (in `<data dir>/local/`, see [`crate::config`]): `carapi.sqlite3` (the store, shared by
//! every `carapi --local ...` and `carapi local ...` process) and `api-key` (mode 0600, the local
//! account's key). On first use (no store yet) an account is created with
//! [`DEMO_CREDIT`] of demo credit. Commands then talk to it through the SDK over HTTP, exactly
//! as to a remote server.

use std::net::SocketAddr;
use std::path::PathBuf;

use carapi_service::{Config, NovaConta, RunningServer, ServerError};
use rust_decimal::Decimal;

use crate::config::{Paths, create_private_dir, write_private};
use crate::error::{CliError, Kind, Result};

/// Demo credit of a new local account: R$ 100,00 (the server's default account).
pub(crate) const DEMO_CREDIT: Decimal = Decimal::from_parts(10_000, 0, 0, false, 2);

/// The in-process reference server and its local account.
#[derive(Debug)]
pub(crate) struct Local {
    server: RunningServer,
    api_key: String,
    key_file: PathBuf,
    /// True when this start created the store and the account.
    pub(crate) created_conta: bool,
}

fn server_err(e: ServerError) -> CliError {
    match e {
        ServerError::NotFound(m) => CliError::new(
            Kind::NotFound,
            "NAO_ENCONTRADO",
            format!("não encontrado: {m}"),
        )
        .hint("confira o ID com carapi --local recargas"),
        ServerError::Io(io) => CliError::other(
            "LOCAL",
            format!("servidor local: {}", crate::foreign_errors::io(&io)),
        ),
        other => CliError::other("LOCAL", format!("servidor local: {other}")),
    }
}

impl Local {
    /// Starts the server over `<data dir>/local/carapi.sqlite3` on `bind` (default
    /// `127.0.0.1:0`), creating the store and the funded account on first use.
    ///
    /// # Errors
    /// When the directory, the store or the key file cannot be used, or the address cannot be bound.
    pub(crate) async fn start(paths: &Paths, bind: Option<SocketAddr>) -> Result<Local> {
        let dir = paths.local_dir();
        create_private_dir(&dir)?;
        let db = dir.join("carapi.sqlite3");
        let key_file = dir.join("api-key");
        let fresh = !db.exists() || !key_file.exists();
        let mut config = Config::local(format!("sqlite://{}", db.display()));
        if let Some(b) = bind {
            config.bind = b;
        }
        let server = carapi_service::spawn(config).await.map_err(server_err)?;
        let api_key = if fresh {
            let conta = server
                .create_conta(NovaConta {
                    saldo: DEMO_CREDIT,
                    ..NovaConta::default()
                })
                .await
                .map_err(server_err)?;
            write_private(&key_file, format!("{}\n", conta.api_key).as_bytes())?;
            conta.api_key
        } else {
            std::fs::read_to_string(&key_file)
                .map_err(|e| CliError::io_at(&key_file, e))?
                .trim()
                .to_owned()
        };
        Ok(Local {
            server,
            api_key,
            key_file,
            created_conta: fresh,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The local account's key.
    pub(crate) fn api_key(&self) -> &str {
        &self.api_key
    }

    /// `<data dir>/local/api-key`.
    pub(crate) fn key_file(&self) -> PathBuf {
        self.key_file.clone()
    }

    /// Plays the bank paying a pending top-up of the local store (the server's simulated PSP
    /// marks it paid and delivers the signed webhook; the store confirms it for every process).
    ///
    /// # Errors
    /// Unknown top-up (exit 4); other server failures (exit 1).
    pub(crate) async fn pay(&self, recarga_id: uuid::Uuid) -> Result<()> {
        self.server
            .pay_recarga(recarga_id)
            .await
            .map_err(server_err)
    }

    /// Stops the server (in-flight requests finish).
    pub(crate) async fn shutdown(self) {
        self.server.shutdown().await;
    }
}
