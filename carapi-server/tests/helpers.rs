//! A test application: a fresh SQLite file with the bundled data, the router, the state, and a
//! movable clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use carapi_service::clock::Clock;
use carapi_service::dados::Imovel;
use carapi_service::store::{SqliteStore, Store};
use carapi_service::{AppState, Config, ContaCriada, NovaConta};
use chrono::{Duration, Utc};
use serde_json::Value;
use tempfile::TempDir;
use tower::ServiceExt;

/// A bundled record with a receipt.
pub const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
/// A bundled record without a receipt (status PE).
pub const CODIGO_WITHOUT_RECIBO: &str = "DF-5300108-277959445CC745B68C065E77AB1F2B42";
/// A well-formed code that is not in the base.
pub const MISSING_CODIGO: &str = "DF-5300108-00000000000000000000000000000ABC";

pub struct App {
    pub router: Router,
    pub state: AppState,
    pub sqlite: Arc<SqliteStore>,
    /// Seconds added to the system clock.
    pub offset: Arc<AtomicI64>,
    _dir: TempDir,
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// Asserts an ApiError body with this status and code; returns the body.
    pub fn error(&self, status: u16, codigo: &str) -> Value {
        let v = self.json();
        assert_eq!(self.status.as_u16(), status, "body: {v}");
        assert_eq!(v["success"], false, "{v}");
        assert_eq!(v["error"], codigo, "{v}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        v
    }

    pub fn ok(&self) -> Value {
        let v = self.json();
        assert_eq!(self.status, StatusCode::OK, "body: {v}");
        v
    }
}

impl App {
    pub async fn new() -> App {
        App::com(|_| {}).await
    }

    /// An app whose config is adjusted by `f` (the rate limiter is off unless `f` sets it).
    pub async fn com(f: impl FnOnce(&mut Config)) -> App {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
        let mut config = Config::local(&url);
        config.rate_limit = None;
        f(&mut config);
        let sqlite = Arc::new(SqliteStore::connect(&url).await.unwrap());
        let store: Arc<dyn Store> = sqlite.clone();
        carapi_service::startup::load_bundled_data(store.as_ref())
            .await
            .unwrap();
        let offset = Arc::new(AtomicI64::new(0));
        let d = offset.clone();
        let state = AppState::new(store, config).with_clock(Clock::from_fn(move || {
            Utc::now() + Duration::seconds(d.load(Ordering::SeqCst))
        }));
        App {
            router: carapi_service::http::router(state.clone()),
            state,
            sqlite,
            offset,
            _dir: dir,
        }
    }

    pub fn advance(&self, seconds: i64) {
        self.offset.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn store(&self) -> &dyn Store {
        self.state.store.as_ref()
    }

    pub async fn conta(&self, fresh: NovaConta) -> ContaCriada {
        carapi_service::create_conta(self.store(), fresh)
            .await
            .unwrap()
    }

    /// An account with `saldo` BRL on the current table.
    pub async fn conta_com(&self, saldo: i64) -> ContaCriada {
        self.conta(NovaConta {
            saldo: saldo.into(),
            ..NovaConta::default()
        })
        .await
    }

    pub async fn write(&self, imoveis: &[Imovel]) {
        self.store().write_imoveis(imoveis).await.unwrap();
    }

    pub async fn send(&self, req: Request<Body>) -> Resp {
        let resp = self.router.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        Resp {
            status,
            headers,
            body,
        }
    }

    pub async fn req(
        &self,
        method: Method,
        key: Option<&str>,
        path: &str,
        body: Option<&str>,
    ) -> Resp {
        let mut b = Request::builder().method(method).uri(path);
        if let Some(k) = key {
            b = b.header("authorization", format!("Bearer {k}"));
        }
        let body = match body {
            Some(s) => {
                b = b.header("content-type", "application/json");
                Body::from(s.to_owned())
            }
            None => Body::empty(),
        };
        self.send(b.body(body).unwrap()).await
    }

    pub async fn get(&self, key: &str, path: &str) -> Resp {
        self.req(Method::GET, Some(key), path, None).await
    }

    pub async fn post(&self, key: &str, path: &str, body: &str) -> Resp {
        self.req(Method::POST, Some(key), path, Some(body)).await
    }

    pub async fn put(&self, key: &str, path: &str, body: &str) -> Resp {
        self.req(Method::PUT, Some(key), path, Some(body)).await
    }

    pub async fn saldo(&self, key: &str) -> Value {
        self.get(key, "/v1/saldo").await.ok()
    }

    pub async fn historico(&self, key: &str, query: &str) -> Value {
        self.get(key, &format!("/v1/historico{query}")).await.ok()
    }
}

/// `n` copies of a bundled record with distinct codes in the same municipality, all owned by
/// `documento` (for owner-lookup truncation).
pub fn copies_with_owner(n: usize, documento: &carapi_sdk::CpfCnpj) -> Vec<Imovel> {
    let base = carapi_service::dados::bundled().remove(0);
    (0..n)
        .map(|i| {
            let mut im = base.clone();
            im.codigo_car = format!("DF-5300108-{:032X}", 0xF000_0000_u64 + i as u64)
                .parse()
                .unwrap();
            im.proprietarios = vec![carapi_service::dados::Proprietario {
                documento: documento.clone(),
                nome: "Dono de Muitos Exemplo".into(),
            }];
            im
        })
        .collect()
}
