//! The HTTP behaviour over a PostgreSQL store: the router (as `helpers::App` does for SQLite)
//! and a spawned server on a real socket, selected by a `postgres://` URL.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request};
use carapi_service::pix::webhook::{PixEvent, SIGNATURE_HEADER, sign};
use carapi_service::{AppState, Centavos, Config, ContaCriada, NovaConta};
use serde_json::Value;
use tower::ServiceExt;

use super::TestDatabase;
use crate::helpers::{CODIGO, Resp};

/// A router over a fresh PostgreSQL database with the bundled data (rate limiter off).
struct PgApp {
    router: Router,
    state: AppState,
    _database: TestDatabase,
}

impl PgApp {
    async fn new(test: &str) -> Option<PgApp> {
        let database = TestDatabase::create(test).await?;
        let store = database.store().await;
        carapi_service::startup::load_bundled_data(store.as_ref())
            .await
            .unwrap();
        let mut config = Config::local(&database.url);
        config.rate_limit = None;
        let state = AppState::new(store, config);
        Some(PgApp {
            router: carapi_service::http::router(state.clone()),
            state,
            _database: database,
        })
    }

    async fn conta_com(&self, saldo: i64) -> ContaCriada {
        let fresh = NovaConta {
            saldo: saldo.into(),
            ..NovaConta::default()
        };
        carapi_service::create_conta(self.state.store.as_ref(), fresh)
            .await
            .unwrap()
    }

    async fn send(&self, req: Request<Body>) -> Resp {
        let resp = self.router.clone().oneshot(req).await.unwrap();
        let (status, headers) = (resp.status(), resp.headers().clone());
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        Resp {
            status,
            headers,
            body,
        }
    }

    async fn req(&self, method: Method, key: &str, path: &str, body: Option<&str>) -> Resp {
        let b = Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", "application/json");
        self.send(
            b.body(body.map_or_else(Body::empty, |s| Body::from(s.to_owned())))
                .unwrap(),
        )
        .await
    }

    async fn get(&self, key: &str, path: &str) -> Value {
        self.req(Method::GET, key, path, None).await.ok()
    }

    async fn webhook(&self, payment_id: &str) -> Request<Body> {
        let body = serde_json::to_vec(&PixEvent::pago(payment_id, chrono::Utc::now())).unwrap();
        let secret = self.state.webhook_secret().await.unwrap();
        Request::post("/webhooks/pix")
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, sign(&secret, &body, chrono::Utc::now()))
            .body(Body::from(body))
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn postgres_two_hundred_concurrent_lookups_on_fifty_lookups_of_balance() {
    let Some(app) =
        PgApp::new("postgres_two_hundred_concurrent_lookups_on_fifty_lookups_of_balance").await
    else {
        return;
    };
    let app = Arc::new(app);
    let c = app.conta_com(50).await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (app, key) = (app.clone(), c.api_key.clone());
            tokio::spawn(async move {
                app.req(Method::GET, &key, &format!("/v1/car/{CODIGO}"), None)
                    .await
            })
        })
        .collect();
    let (mut ok, mut without_saldo) = (0, 0);
    for t in tasks {
        let r = t.await.unwrap();
        match r.status.as_u16() {
            200 => ok += 1,
            402 => {
                r.error(402, "SALDO_INSUFICIENTE");
                without_saldo += 1;
            }
            s => panic!("unexpected {s}: {}", String::from_utf8_lossy(&r.body)),
        }
    }
    assert_eq!((ok, without_saldo), (50, 150));
    let s = app.get(&c.api_key, "/v1/saldo").await;
    assert_eq!(s["saldoReais"], 0.0);
    assert_eq!(
        (
            s["usoHoje"]["requisicoes"].as_u64(),
            s["usoHoje"]["erros"].as_u64()
        ),
        (Some(200), Some(150))
    );
    assert_eq!(
        (
            s["usoHoje"]["gasto"].as_f64(),
            s["usoMes"]["gasto"].as_f64()
        ),
        (Some(50.0), Some(50.0))
    );
    assert_eq!(app.get(&c.api_key, "/v1/historico").await["total"], 200);
    assert_eq!(
        app.get(&c.api_key, "/v1/historico?status=sucesso").await["total"],
        50
    );
    assert_eq!(
        app.get(&c.api_key, "/v1/historico?status=erro").await["total"],
        150
    );
    let mut depois: Vec<f64> = Vec::new();
    for page in 1..=2 {
        let p = app
            .get(
                &c.api_key,
                &format!("/v1/historico?status=sucesso&size=100&page={page}"),
            )
            .await;
        for i in p["itens"].as_array().unwrap() {
            assert_eq!(i["valorCobrado"], 1.0);
            depois.push(i["saldoDepois"].as_f64().unwrap());
        }
    }
    depois.sort_by(f64::total_cmp);
    assert_eq!(depois, (0..50).map(f64::from).collect::<Vec<_>>());
    let uso = app.get(&c.api_key, "/v1/uso").await;
    assert_eq!(
        (
            uso["itens"][0]["quantidade"].as_u64(),
            uso["itens"][0]["valorTotal"].as_f64()
        ),
        (Some(200), Some(50.0))
    );
    let ledger = app.state.store.ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    assert_eq!(
        (ledger.saldo, ledger.debits),
        (Centavos::new(0), Centavos::new(5_000))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn postgres_same_webhook_20_times_concurrently_while_reconciliation_runs_credits_once() {
    let Some(app) = PgApp::new(
        "postgres_same_webhook_20_times_concurrently_while_reconciliation_runs_credits_once",
    )
    .await
    else {
        return;
    };
    let app = Arc::new(app);
    let c = app.conta_com(1).await;
    for round in 0..3 {
        let v = app
            .req(
                Method::POST,
                &c.api_key,
                "/v1/recarga",
                Some(&format!(r#"{{"valor": {}}}"#, 1000 + round)),
            )
            .await
            .ok();
        let payment = v["paymentId"].as_str().unwrap().to_owned();
        app.state
            .psp
            .as_ref()
            .unwrap()
            .pay(&payment, chrono::Utc::now())
            .await
            .unwrap();
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let (app, payment) = (app.clone(), payment.clone());
                tokio::spawn(async move {
                    let mut n = 0;
                    if i % 5 == 0 {
                        n += carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
                            .await
                            .unwrap();
                    }
                    let v = app.send(app.webhook(&payment).await).await.ok();
                    n + u32::from(v["creditada"] == true)
                })
            })
            .collect();
        let mut credits = 0;
        for t in tasks {
            credits += t.await.unwrap();
        }
        assert_eq!(credits, 1, "round {round}: credited {credits} times");
    }
    let saldo = app.get(&c.api_key, "/v1/saldo").await["saldoReais"]
        .as_f64()
        .unwrap();
    let expected = 1.0 + (1000.0 + 50.0) + (1001.0 + 50.05) + (1002.0 + 50.10);
    assert!((saldo - expected).abs() < 1e-9, "{saldo} != {expected}");
    let ledger = app.state.store.ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    assert_eq!(ledger.creditado_recargas, Centavos::new(315_315));
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn postgres_limits_top_up_reuse_and_price_switch_through_the_router() {
    let Some(app) =
        PgApp::new("postgres_limits_top_up_reuse_and_price_switch_through_the_router").await
    else {
        return;
    };
    let legado = NovaConta {
        saldo: 10.into(),
        legado: true,
        ..NovaConta::default()
    };
    let c = carapi_service::create_conta(app.state.store.as_ref(), legado)
        .await
        .unwrap();
    let put = |b: &'static str| app.req(Method::PUT, &c.api_key, "/v1/limites", Some(b));
    let v = put(r#"{"limiteDiarioRequisicoes":1,"limiteMensalReais":250.5}"#)
        .await
        .ok();
    assert_eq!(
        (
            v["limiteDiarioRequisicoes"].as_u64(),
            v["limiteMensalReais"].as_f64()
        ),
        (Some(1), Some(250.5))
    );
    let v = put(r#"{"limiteMensalReais":null}"#).await.ok();
    assert_eq!(
        (
            v["limiteDiarioRequisicoes"].as_u64(),
            v["limiteMensalReais"].is_null()
        ),
        (Some(1), true)
    );
    app.req(Method::GET, &c.api_key, &format!("/v1/car/{CODIGO}"), None)
        .await
        .ok();
    let r = app
        .req(Method::GET, &c.api_key, &format!("/v1/car/{CODIGO}"), None)
        .await;
    r.error(429, "LIMITE_EXCEDIDO");
    let s = app.get(&c.api_key, "/v1/saldo").await;
    assert_eq!(
        (
            s["usoHoje"]["requisicoes"].as_u64(),
            s["usoHoje"]["erros"].as_u64()
        ),
        (Some(2), Some(1))
    );
    // a legacy account confirms the new prices, is reused within 10 minutes, then credited once
    let body = r#"{"valor": 500, "confirmarNovosPrecos": true}"#;
    let a = app
        .req(Method::POST, &c.api_key, "/v1/recarga", Some(body))
        .await
        .ok();
    let b = app
        .req(Method::POST, &c.api_key, "/v1/recarga", Some(body))
        .await
        .ok();
    assert_eq!(
        (a["recargaId"].clone(), b["reaproveitada"].clone()),
        (b["recargaId"].clone(), Value::Bool(true))
    );
    let payment = a["paymentId"].as_str().unwrap();
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(payment, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(
        app.send(app.webhook(payment).await).await.ok()["creditada"],
        true
    );
    assert_eq!(
        app.send(app.webhook(payment).await).await.ok()["creditada"],
        false
    );
    let s = app.get(&c.api_key, "/v1/saldo").await;
    assert!(s["saldoReais"].as_f64().unwrap() > 500.0, "{s}");
    let id = a["recargaId"].as_str().unwrap();
    assert_eq!(
        app.get(&c.api_key, &format!("/v1/recarga/{id}")).await["status"],
        "Confirmado"
    );
    assert_eq!(app.get(&c.api_key, "/v1/recargas").await["total"], 1);
    let ledger = app.state.store.ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
}

/// `spawn(Config::local("postgres://..."))` (what `carapi-server serve --database postgres://...`
/// does): the URL picks the PostgreSQL store, the missing database is created and migrated,
/// the bundled data loaded, and the API answers over a real socket.
#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn postgres_url_spawns_a_server_that_creates_its_database_and_answers_over_a_socket() {
    let Some(database) = TestDatabase::reserve(
        "postgres_url_spawns_a_server_that_creates_its_database_and_answers_over_a_socket",
    ) else {
        return;
    };
    let server = carapi_service::spawn(Config::local(&database.url))
        .await
        .unwrap();
    assert!(
        format!("{:?}", server.store()).contains("PgStore"),
        "{:?}",
        server.store()
    );
    assert_eq!(
        server.store().count_imoveis().await.unwrap(),
        carapi_service::dados::bundled().len() as u64
    );
    let c = server.create_conta(NovaConta::default()).await.unwrap();
    let http = reqwest::Client::new();
    let get = |path: String| {
        http.get(format!("{}{path}", server.base_url()))
            .bearer_auth(&c.api_key)
            .send()
    };
    let r = get(format!("/v1/car/{CODIGO}")).await.unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = get("/v1/saldo".into()).await.unwrap().json().await.unwrap();
    assert_eq!(v["saldoReais"], 99.0);
    let ledger = server.check_ledger(c.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    server.shutdown().await;
    // a second start over the same (now existing, migrated, loaded) database works
    let again = carapi_service::startup::open_store(&database.url)
        .await
        .unwrap();
    assert_eq!(again.contas().await.unwrap(), vec![c.conta_id]);
}
