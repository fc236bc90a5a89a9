//! A spawned server on a real socket over SQLite and (when `DATABASE_URL` is set) PostgreSQL,
//! for the money and store scenarios that must answer the same on both stores.

use std::sync::Arc;

use carapi_service::pix::PixProvider;
use carapi_service::pix::webhook::{PixEvent, SIGNATURE_HEADER, sign};
use carapi_service::startup::{load_bundled_data, open_store, spawn_with};
use carapi_service::{AppState, Config, ContaCriada, NovaConta, RunningServer};
use serde_json::Value;
use tempfile::TempDir;

use crate::postgres::TestDatabase;

/// Where a [`Server`] keeps its data.
pub struct DatabaseArgs {
    /// `"sqlite"` or `"postgres"` (for assertion messages).
    pub name: &'static str,
    /// The database URL.
    pub url: String,
    _pg: Option<TestDatabase>,
    _dir: Option<TempDir>,
}

/// A fresh SQLite file, and a fresh PostgreSQL database when `DATABASE_URL` is set.
pub async fn databases(test: &str) -> Vec<DatabaseArgs> {
    let dir = tempfile::tempdir().unwrap();
    let mut v = vec![DatabaseArgs {
        name: "sqlite",
        url: format!("sqlite://{}", dir.path().join("carapi.db").display()),
        _pg: None,
        _dir: Some(dir),
    }];
    if let Some(pg) = TestDatabase::create(test).await {
        v.push(DatabaseArgs {
            name: "postgres",
            url: pg.url.clone(),
            _pg: Some(pg),
            _dir: None,
        });
    }
    v
}

/// A server on `127.0.0.1:0` and an HTTP client.
pub struct Server {
    /// Store name, for messages.
    pub name: &'static str,
    /// The running server.
    pub server: RunningServer,
    /// The client.
    pub http: reqwest::Client,
}

impl Server {
    /// A server over `database` with the bundled data, limiter off, `f` adjusting the config and
    /// `pix` replacing the PIX provider (given the simulated one).
    pub async fn com(
        database: &DatabaseArgs,
        f: impl FnOnce(&mut Config),
        pix: impl FnOnce(Arc<dyn PixProvider>) -> Arc<dyn PixProvider>,
    ) -> Server {
        let mut config = Config::local(&database.url);
        config.rate_limit = None;
        f(&mut config);
        let store = open_store(&config.database_url).await.unwrap();
        load_bundled_data(store.as_ref()).await.unwrap();
        let state = AppState::new(store, config);
        let state = state.clone().with_pix(pix(state.pix.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Server {
            name: database.name,
            server: spawn_with(state, listener).await.unwrap(),
            http: reqwest::Client::new(),
        }
    }

    /// The default server over `database`.
    pub async fn new(database: &DatabaseArgs) -> Server {
        Server::com(database, |_| {}, |p| p).await
    }

    /// An account with `saldo` BRL.
    pub async fn conta(&self, saldo: i64) -> ContaCriada {
        self.server
            .create_conta(NovaConta {
                saldo: saldo.into(),
                ..NovaConta::default()
            })
            .await
            .unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base_url())
    }

    async fn response(r: reqwest::Response) -> (u16, Value) {
        let status = r.status().as_u16();
        let body = r.bytes().await.unwrap();
        let v = serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
        (status, v)
    }

    /// `GET path` with `key`: status and JSON body.
    pub async fn get(&self, key: &str, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).bearer_auth(key).send();
        Self::response(r.await.unwrap()).await
    }

    /// `POST path` with `key` and a JSON body.
    pub async fn post(&self, key: &str, path: &str, body: &str) -> (u16, Value) {
        let r = self
            .http
            .post(self.url(path))
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send();
        Self::response(r.await.unwrap()).await
    }

    /// The balance of `key` in BRL.
    pub async fn saldo(&self, key: &str) -> f64 {
        let (s, v) = self.get(key, "/v1/saldo").await;
        assert_eq!(s, 200, "{v}");
        v["saldoReais"].as_f64().unwrap()
    }

    /// `POST /webhooks/pix` with `corpo` signed with `secret`.
    pub async fn raw_webhook(&self, secret: &str, body: Vec<u8>) -> (u16, Value) {
        let r = self
            .http
            .post(self.url("/webhooks/pix"))
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, sign(secret, &body, chrono::Utc::now()))
            .body(body)
            .send();
        Self::response(r.await.unwrap()).await
    }

    /// A `pago` webhook for `payment_id` signed with `secret`.
    pub async fn webhook(&self, secret: &str, payment_id: &str) -> (u16, Value) {
        let body = serde_json::to_vec(&PixEvent::pago(payment_id, chrono::Utc::now())).unwrap();
        self.raw_webhook(secret, body).await
    }

    /// The server's webhook secret (configured or stored in its database).
    pub async fn secret(&self) -> String {
        self.server
            .state()
            .webhook_secret()
            .await
            .unwrap()
            .to_string()
    }

    /// A new top-up of `valor` BRL: (recargaId, paymentId).
    pub async fn recarga(&self, key: &str, valor: &str) -> (String, String) {
        let (s, v) = self
            .post(key, "/v1/recarga", &format!(r#"{{"valor": {valor}}}"#))
            .await;
        assert_eq!(s, 200, "{}: {v}", self.name);
        (
            v["recargaId"].as_str().unwrap().to_owned(),
            v["paymentId"].as_str().unwrap().to_owned(),
        )
    }

    /// The ledger check of `conta` holds.
    pub async fn ledger_ok(&self, conta: &ContaCriada) {
        let r = self.server.check_ledger(conta.conta_id).await.unwrap();
        assert!(r.is_consistent(), "{}: {r:?}", self.name);
    }
}
