//! The operator's probes over a real socket: `/livez` and `/readyz` answer `GET` and `HEAD`
//! without a key while `/v1` keeps refusing `HEAD`; `/readyz` answers 503 while PostgreSQL is
//! away (through the fault proxy) and 200 again when it is back.

use std::time::Duration;

use carapi_service::{Config, spawn};

use crate::network::{raw, requested, servers};
use crate::postgres::TestDatabase;
use crate::proxy_pg::ProxyPg;

#[tokio::test]
async fn livez_and_readyz_answer_get_and_head_without_a_key_and_v1_head_stays_405() {
    for s in servers("sondas", |_| {}).await {
        for path in ["/livez", "/readyz"] {
            for method in ["GET", "HEAD"] {
                let r = raw(&s.srv, &requested(method, path, &[], b"")).await;
                assert_eq!(r.status, 200, "[{}] {method} {path}: {r:?}", s.name);
                if method == "HEAD" {
                    assert!(r.body.is_empty(), "[{}] HEAD {path}: {r:?}", s.name);
                }
            }
            let r = raw(&s.srv, &requested("POST", path, &[], b"")).await;
            assert_eq!(r.status, 405, "[{}] POST {path}: {r:?}", s.name);
        }
        let c = s.conta(100).await;
        let auth = format!("Authorization: Bearer {}", c.api_key);
        let r = raw(
            &s.srv,
            &requested("HEAD", "/v1/saldo", &[auth.as_bytes()], b""),
        )
        .await;
        assert_eq!(r.status, 405, "[{}] HEAD /v1/saldo: {r:?}", s.name);
    }
}

async fn readyz(base: &str) -> u16 {
    reqwest::get(format!("{base}/readyz"))
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn readyz_is_503_while_postgres_is_away_and_200_when_it_is_back() {
    let Some(database) = TestDatabase::create("readyz_fora").await else {
        return;
    };
    let proxy = ProxyPg::new_for(&database.url).await;
    let srv = spawn(Config::local(proxy.url(&database.url)))
        .await
        .unwrap();
    let base = srv.base_url();
    assert_eq!(readyz(&base).await, 200);
    proxy.refuse();
    proxy.cut_connections();
    assert_eq!(readyz(&base).await, 503, "database away");
    let livez = reqwest::get(format!("{base}/livez")).await.unwrap();
    assert_eq!(livez.status().as_u16(), 200, "the process still lives");
    proxy.pass();
    let mut st = 0;
    for _ in 0..500 {
        st = readyz(&base).await;
        if st == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(st, 200, "ready again once the database is back");
    srv.shutdown().await;
}
