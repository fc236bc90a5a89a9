//! Over a real socket, through `spawn`.

use carapi_service::{Config, NovaConta, spawn};
use serde_json::Value;

use crate::helpers::CODIGO;

async fn get(c: &reqwest::Client, url: &str, key: &str) -> (u16, Value) {
    let r = c.get(url).bearer_auth(key).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test]
async fn spawn_serves_the_contract_and_pays_top_ups() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = spawn(Config::local(&url)).await.unwrap();
    assert!(server.addr().ip().is_loopback());
    assert_ne!(server.addr().port(), 0);
    let base = server.base_url();
    assert_eq!(base, format!("http://{}", server.addr()));
    let conta = server.create_conta(NovaConta::default()).await.unwrap();
    let json = serde_json::to_value(&conta).unwrap();
    assert!(json["contaId"].is_number() && json["apiKey"].is_string());

    let http = reqwest::Client::new();
    let (s, v) = get(&http, &format!("{base}/v1/saldo"), &conta.api_key).await;
    assert_eq!((s, v["saldoReais"].as_f64()), (200, Some(100.0)));
    let (s, v) = get(&http, &format!("{base}/v1/car/{CODIGO}"), &conta.api_key).await;
    assert_eq!(s, 200);
    assert_eq!(v["dados"]["codigoCar"], CODIGO);
    let (s, v) = get(&http, &format!("{base}/v1/saldo"), "car_errada").await;
    assert_eq!((s, v["error"].as_str()), (401, Some("TOKEN_INVALIDO")));

    // top-up paid through the library: webhook over the socket
    let created: Value = http
        .post(format!("{base}/v1/recarga"))
        .bearer_auth(&conta.api_key)
        .json(&serde_json::json!({"valor": 500}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id: uuid::Uuid = created["recargaId"].as_str().unwrap().parse().unwrap();
    server.pay_recarga(id).await.unwrap();
    server.pay_recarga(id).await.unwrap();
    let (_, v) = get(&http, &format!("{base}/v1/recarga/{id}"), &conta.api_key).await;
    assert_eq!(v["status"], "Confirmado");
    assert_eq!(v["saldoAtual"], 599.0);
    assert!(matches!(
        server.pay("PIXNAOEXISTE").await,
        Err(carapi_service::ServerError::NotFound(_))
    ));
    assert!(matches!(
        server.pay_recarga(uuid::Uuid::nil()).await,
        Err(carapi_service::ServerError::NotFound(_))
    ));
    let ledger = server.check_ledger(conta.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    assert_eq!(ledger.saldo, carapi_service::Centavos::new(59_900));
    server.shutdown().await;
    assert!(
        http.get(format!("{base}/v1/saldo")).send().await.is_err(),
        "closed after shutdown"
    );

    // a second server over the same file sees the same accounts and data (WAL, two pools)
    let again = spawn(Config::local(&url)).await.unwrap();
    let (s, v) = get(
        &http,
        &format!("{}/v1/saldo", again.base_url()),
        &conta.api_key,
    )
    .await;
    assert_eq!((s, v["saldoReais"].as_f64()), (200, Some(599.0)));
    again.shutdown().await;
}

#[tokio::test]
async fn two_servers_on_one_database_confirm_through_the_store() {
    // the CLI's local mode: one process waits, another pays
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("s.db").display());
    let a = spawn(Config::local(&url)).await.unwrap();
    let b = spawn(Config::local(&url)).await.unwrap();
    let conta = a
        .create_conta(NovaConta {
            saldo: 0.into(),
            ..NovaConta::default()
        })
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/v1/recarga", a.base_url()))
        .bearer_auth(&conta.api_key)
        .json(&serde_json::json!({"valor": 1000}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    b.pay(created["paymentId"].as_str().unwrap()).await.unwrap();
    let (_, v) = get(&http, &format!("{}/v1/saldo", a.base_url()), &conta.api_key).await;
    assert_eq!(v["saldoReais"], 1050.0);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn an_in_memory_url_charges_through_the_same_writer() {
    let server = spawn(Config::local("sqlite::memory:")).await.unwrap();
    let conta = server.create_conta(NovaConta::default()).await.unwrap();
    let http = reqwest::Client::new();
    let base = server.base_url();
    let (s, v) = get(&http, &format!("{base}/v1/car/{CODIGO}"), &conta.api_key).await;
    assert_eq!((s, v["cache"].as_bool()), (200, Some(false)));
    let (_, v) = get(&http, &format!("{base}/v1/car/{CODIGO}"), &conta.api_key).await;
    assert_eq!(
        v["cache"].as_bool(),
        Some(true),
        "the writer saw the record consolidated"
    );
    let (_, v) = get(&http, &format!("{base}/v1/saldo"), &conta.api_key).await;
    assert_eq!(
        v["saldoReais"].as_f64(),
        Some(98.0),
        "two basic lookups at 1.00"
    );
    assert!(
        server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
    // Another in-memory server is a separate database.
    let other = spawn(Config::local("sqlite::memory:")).await.unwrap();
    let (s, _) = get(
        &http,
        &format!("{}/v1/saldo", other.base_url()),
        &conta.api_key,
    )
    .await;
    assert_eq!(s, 401);
    server.shutdown().await;
    other.shutdown().await;
}
