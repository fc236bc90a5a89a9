//! PostgreSQL away, through the fault proxy ([`crate::proxy_pg`]): while it refuses or
//! swallows, requests that need the database answer 503 `SERVICO_INDISPONIVEL` as `ApiError`
//! JSON with `Retry-After` once the store gives up waiting for a connection, instead of
//! hanging; nothing is debited; when the database is back the server serves again by itself.
//! Prints the longest request seen while the database was away. Skips without `DATABASE_URL`.

use std::time::{Duration, Instant};

use carapi_service::{Config, NovaConta, spawn};
use serde_json::Value;

use crate::helpers::CODIGO;
use crate::postgres::TestDatabase;
use crate::proxy_pg::ProxyPg;

/// `GET path` with `key`: status, `Retry-After`, body, and how long it took.
async fn ask(base: &str, key: &str, path: &str) -> (u16, Option<String>, Value, Duration) {
    let t = Instant::now();
    let r = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = r.json().await.unwrap_or(Value::Null);
    (status, retry, body, t.elapsed())
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn while_postgres_is_away_requests_answer_503_at_once_and_nothing_is_debited() {
    let Some(database) = TestDatabase::create("banco_fora").await else {
        return;
    };
    let proxy = ProxyPg::new_for(&database.url).await;
    let mut config = Config::local(proxy.url(&database.url));
    config.rate_limit = None;
    let srv = spawn(config).await.unwrap();
    let base = srv.base_url();
    let conta = srv.create_conta(NovaConta::default()).await.unwrap();
    let key = &conta.api_key;
    let (st, _, v, _) = ask(&base, key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(st, 200, "{v}");
    let saldo_antes = ask(&base, key, "/v1/saldo").await.2["saldo"].clone();

    let mut longest = Duration::ZERO;
    for (name, stop) in [
        (
            "recusando",
            (|p: &ProxyPg| {
                p.refuse();
                p.cut_connections();
            }) as fn(&ProxyPg),
        ),
        ("engolindo", |p: &ProxyPg| p.swallow()),
    ] {
        stop(&proxy);
        let requests = [
            "/v1/saldo".to_owned(),
            format!("/v1/car/{CODIGO}"),
            format!("/v1/car/{CODIGO}/completo"),
            "/v1/historico".to_owned(),
        ];
        let responses =
            futures::future::join_all(requests.iter().map(|p| ask(&base, key, p))).await;
        for (path, (st, retry, v, time)) in requests.iter().zip(responses) {
            assert_eq!(st, 503, "[{name}] {path}: {v}");
            assert_eq!(v["success"], false, "[{name}] {path}: {v}");
            assert_eq!(v["error"], "SERVICO_INDISPONIVEL", "[{name}] {path}: {v}");
            assert!(retry.is_some(), "[{name}] {path}: no Retry-After");
            let msg = v["message"].as_str().unwrap_or_default().to_lowercase();
            assert!(
                !msg.contains("cobrad"),
                "[{name}] {path}: claims a charge outcome: {msg}"
            );
            longest = longest.max(time);
        }
        proxy.pass();
        // Back by itself: no restart, no operator.
        let mut st = 0;
        for _ in 0..500 {
            st = ask(&base, key, "/v1/saldo").await.0;
            if st == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(st, 200, "[{name}] the server did not come back");
    }
    println!(
        "banco_fora: longest request while PostgreSQL was away: {} ms",
        longest.as_millis()
    );
    let (_, _, v, _) = ask(&base, key, "/v1/saldo").await;
    assert_eq!(
        v["saldo"], saldo_antes,
        "nothing debited while the database was away"
    );
    let ledger = srv.check_ledger(conta.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    srv.shutdown().await;
}
