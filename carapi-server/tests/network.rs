//! Support for tests over a real socket: a spawned server on SQLite and (when `DATABASE_URL`
//! is set) on PostgreSQL, a raw HTTP/1.1 client for what reqwest refuses to send (NUL bytes,
//! broken headers, half-sent bodies), and the ledger check of every account.

use std::sync::Arc;
use std::time::Duration;

use carapi_service::store::Store;
use carapi_service::{Config, ContaCriada, NovaConta, RunningServer, spawn};
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::postgres::TestDatabase;

/// Longest a test waits for one socket exchange before it fails as hung (a guard against a
/// server that never answers, not a speed figure).
pub const GUARD: Duration = Duration::from_secs(30);

/// A spawned server and what keeps its database alive.
pub struct Server {
    /// `"sqlite"` or `"postgres"`.
    pub name: &'static str,
    /// The server.
    pub srv: RunningServer,
    /// The HTTP client.
    pub http: reqwest::Client,
    _dir: Option<TempDir>,
    _database: Option<TestDatabase>,
}

/// Servers over SQLite and, when `DATABASE_URL` is set, PostgreSQL, each with the bundled
/// data and `ajuste` applied to its config (the per-key limiter and the per-address limit of
/// failed authentications are off unless `ajuste` sets them).
pub async fn servers(test: &str, adjustment: impl Fn(&mut Config)) -> Vec<Server> {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let mut v = vec![Server::new_for("sqlite", &url, &adjustment, Some(dir), None).await];
    if let Some(database) = TestDatabase::create(test).await {
        let url = database.url.clone();
        v.push(Server::new_for("postgres", &url, &adjustment, None, Some(database)).await);
    }
    v
}

impl Server {
    async fn new_for(
        name: &'static str,
        url: &str,
        adjustment: &impl Fn(&mut Config),
        dir: Option<TempDir>,
        database: Option<TestDatabase>,
    ) -> Server {
        let mut config = Config::local(url);
        config.rate_limit = None;
        config.edge.unauthenticated_per_second = None;
        adjustment(&mut config);
        Server {
            name,
            srv: spawn(config).await.unwrap(),
            http: reqwest::Client::builder().timeout(GUARD).build().unwrap(),
            _dir: dir,
            _database: database,
        }
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.srv.base_url())
    }

    /// An account with `saldo` BRL.
    pub async fn conta(&self, saldo: i64) -> ContaCriada {
        self.srv
            .create_conta(NovaConta {
                saldo: saldo.into(),
                ..NovaConta::default()
            })
            .await
            .unwrap()
    }

    /// `GET path` with `key`: status, headers, JSON body (`Null` when not JSON).
    pub async fn get(&self, key: &str, path: &str) -> (u16, reqwest::header::HeaderMap, Value) {
        let r = self
            .http
            .get(self.url(path))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        let (s, h) = (r.status().as_u16(), r.headers().clone());
        (s, h, r.json().await.unwrap_or(Value::Null))
    }

    /// `GET /v1/saldo`'s balance, BRL.
    pub async fn saldo(&self, key: &str) -> f64 {
        let (s, _, v) = self.get(key, "/v1/saldo").await;
        assert_eq!(s, 200, "[{}] {v}", self.name);
        v["saldoReais"].as_f64().unwrap()
    }

    /// `total` of `GET /v1/historico`.
    pub async fn historico_total(&self, key: &str) -> u64 {
        let (s, _, v) = self.get(key, "/v1/historico?size=100").await;
        assert_eq!(s, 200, "[{}] {v}", self.name);
        v["total"].as_u64().unwrap()
    }

    /// The store.
    pub fn store(&self) -> Arc<dyn Store> {
        self.srv.store().clone()
    }

    /// Asserts the ledger check of every account of the store.
    pub async fn ledger_clean(&self) {
        verify_ledgers(self.name, self.store().as_ref()).await;
    }
}

/// Asserts [`carapi_service::Ledger::is_consistent`] for every account of `store`.
pub async fn verify_ledgers(name: &str, store: &dyn Store) {
    for id in store.contas().await.unwrap() {
        let r = store.ledger(id).await.unwrap().unwrap();
        assert!(r.is_consistent(), "[{name}] ledger check failed: {r:?}");
    }
}

/// An answer read off a raw socket.
#[derive(Debug)]
pub struct Raw {
    /// Status code (0 when the server closed without answering).
    pub status: u16,
    /// Header block, lower-cased.
    pub headers: String,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Raw {
    /// The body as JSON (panics with the raw answer when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {} {}\n{}",
                self.status,
                self.headers,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// True when a header line `nome: valor` (lower-case) is present.
    pub fn has(&self, line: &str) -> bool {
        self.headers.lines().any(|l| l.trim() == line)
    }
}

/// Sends `bytes` on a new connection to `srv`, then reads the answer until the server closes
/// (send `Connection: close`). Fails when nothing comes back within [`GUARD`].
pub async fn raw(srv: &RunningServer, bytes: &[u8]) -> Raw {
    let mut tcp = TcpStream::connect(srv.addr()).await.unwrap();
    tcp.write_all(bytes).await.unwrap();
    read_until_close(&mut tcp).await
}

/// Reads what the server sends until it closes the connection (a reset counts as closed).
pub async fn read_until_close(tcp: &mut TcpStream) -> Raw {
    let mut everything = Vec::new();
    let reading = async {
        let mut buf = [0u8; 8192];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => everything.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(GUARD, reading)
        .await
        .expect("the server neither answered nor closed the connection");
    split(&everything)
}

fn split(everything: &[u8]) -> Raw {
    let end = everything
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(everything.len(), |i| i + 4);
    let headers = String::from_utf8_lossy(&everything[..end]).to_lowercase();
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Raw {
        status,
        headers,
        body: everything[end..].to_vec(),
    }
}

/// A request head with `Connection: close` and the given extra header lines.
pub fn requested(method: &str, path: &str, extras: &[&[u8]], body: &[u8]) -> Vec<u8> {
    let mut v = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n")
        .into_bytes();
    for e in extras {
        v.extend_from_slice(e);
        v.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || matches!(method, "POST" | "PUT") {
        v.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    v.extend_from_slice(b"\r\n");
    v.extend_from_slice(body);
    v
}
