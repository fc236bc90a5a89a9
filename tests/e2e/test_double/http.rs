//! The double over HTTP (`/_teste/...`), as a test in another language would drive it.

use carapi_sdk::{NovaRecarga, dec};
use carapi_test_double::TestServer;
use serde_json::{Value, json};

use crate::CODIGO_REAL;

const TOKEN: &str = "token-de-teste-com-32-caracteres-ou-mais";

struct Http {
    base: String,
    http: reqwest::Client,
}

impl Http {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(TOKEN);
        if let Some(c) = body {
            req = req.json(&c);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }
}

async fn server() -> (TestServer, Http) {
    let srv = TestServer::builder()
        .token_http(TOKEN)
        .start()
        .await
        .unwrap();
    let http = Http {
        base: srv.base_url(),
        http: reqwest::Client::new(),
    };
    (srv, http)
}

#[tokio::test]
async fn the_test_routes_need_their_own_token() {
    let (srv, _) = server().await;
    let http = reqwest::Client::new();
    let url = format!("{}/_teste/relogio", srv.base_url());
    for token in [None, Some("errado"), Some("car_0000")] {
        let mut req = http.get(&url);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 401, "{token:?}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "TOKEN_INVALIDO");
    }
    let resp = http.get(&url).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn a_normal_server_has_no_test_routes() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("n.db").display());
    let server = carapi_service::spawn(carapi_service::Config::local(url))
        .await
        .unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/_teste/relogio/avancar", server.base_url()))
        .bearer_auth(TOKEN)
        .json(&json!({"segundos": 60}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["success"], false);
    server.shutdown().await;
}

#[tokio::test]
async fn accounts_faults_clock_and_payments_over_http() {
    let (_srv, h) = server().await;
    let (st, conta) = h
        .post("/_teste/contas", json!({"saldo": 10, "limiteDiario": 5}))
        .await;
    assert_eq!(st, 201, "{conta}");
    let chave = conta["apiKey"].as_str().unwrap().to_owned();
    let id = conta["contaId"].as_i64().unwrap();
    let c = carapi_sdk::Client::builder()
        .base_url(&h.base)
        .api_key(chave)
        .build()
        .unwrap();

    let rule =
        json!({"falha": {"tipo": "perder_resposta_apos_cobrar"}, "rota": "/v1/car/{codigoCar}"});
    let (st, r) = h.post("/_teste/falhas", rule).await;
    assert_eq!(st, 201, "{r}");
    assert!(c.car(CODIGO_REAL).await.unwrap_err().may_have_charged());
    let (st, state) = h.get(&format!("/_teste/contas/{id}")).await;
    assert_eq!(st, 200);
    assert_eq!(state["debitado"], json!(1.0));
    assert_eq!(state["razaoConsistente"], true);
    assert_eq!(state["limiteDiario"], 5);

    let (st, _) = h
        .post(
            "/_teste/falhas",
            json!({"falha": {"tipo": "resetar_conexao"}, "rota": "/v1/carro"}),
        )
        .await;
    assert_eq!(st, 400, "unknown route template");
    let (st, _) = h
        .send(reqwest::Method::DELETE, "/_teste/falhas", None)
        .await;
    assert_eq!(st, 204);

    let r = c.criar_recarga(&NovaRecarga::new(dec!(500))).await.unwrap();
    let pay = format!("/_teste/recargas/{}/pagar", r.recarga_id);
    let (st, _) = h.post(&pay, json!({"webhook": false})).await;
    assert_eq!(st, 204);
    let (_, antes) = h.get("/_teste/relogio").await;
    let (st, advance) = h
        .post("/_teste/relogio/avancar", json!({"segundos": 120}))
        .await;
    assert_eq!(st, 200, "{advance}");
    assert_eq!(advance["reconciliadas"], 1);
    assert!(advance["agora"].as_str().unwrap() > antes["agora"].as_str().unwrap());
    let (_, state) = h.get(&format!("/_teste/contas/{id}")).await;
    assert_eq!(state["saldo"], json!(509.0));
}

#[tokio::test]
async fn bad_test_requests_get_api_errors() {
    let (_srv, h) = server().await;
    for (path, body) in [
        ("/_teste/relogio/avancar", json!({"segundos": -1})),
        ("/_teste/relogio/avancar", json!({"segundos": "1"})),
        ("/_teste/contas", json!({"saldo": -5})),
        ("/_teste/contas", json!({"limiteMensal": 2000000})),
        ("/_teste/falhas", json!({"falha": {"tipo": "explodir"}})),
        ("/_teste/recargas/nao-uuid/pagar", json!({})),
    ] {
        let (st, e) = h.post(path, body.clone()).await;
        assert_eq!(st, 400, "{path} {body}: {e}");
        assert_eq!(e["success"], false, "{e}");
    }
    let (st, e) = h
        .post(
            &format!("/_teste/recargas/{}/pagar", uuid::Uuid::nil()),
            json!({}),
        )
        .await;
    assert_eq!(st, 404, "{e}");
    let (st, _) = h.get("/_teste/contas/999999").await;
    assert_eq!(st, 404);
    let (st, e) = h.send(reqwest::Method::PUT, "/_teste/relogio", None).await;
    assert_eq!(st, 405, "{e}");
}
