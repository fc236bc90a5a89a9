//! The retention of uncharged error rows, on the test double's clock, over SQLite and (with
//! `DATABASE_URL`) PostgreSQL: once the clock is past the retention, the job deletes the old
//! errors only; the charged rows, old or not, and the younger errors stay; the history's pages
//! and totals (every filter), the balance, `/v1/uso` and the ledger check agree with the rows
//! left.

use std::time::Duration;

use carapi_test_double::TestServer;
use serde_json::Value;

use crate::helpers::{CODIGO, MISSING_CODIGO};
use crate::server::databases;

const DAY: Duration = Duration::from_secs(86_400);

/// GET `path` with `key`: status and body.
async fn get(srv: &TestServer, key: &str, path: &str) -> (u16, Value) {
    let r = reqwest::Client::new()
        .get(format!("{}{path}", srv.base_url()))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let st = r.status().as_u16();
    (st, r.json().await.unwrap_or(Value::Null))
}

/// One lookup: `ok` a charged 200 of `CODIGO`, else a 404 (uncharged) of a missing code;
/// `completo` on `/completo`.
async fn consulta(srv: &TestServer, key: &str, ok: bool, completo: bool) {
    let codigo = if ok { CODIGO } else { MISSING_CODIGO };
    let suffix = if completo { "/completo" } else { "" };
    let (st, v) = get(srv, key, &format!("/v1/car/{codigo}{suffix}")).await;
    assert_eq!(st, if ok { 200 } else { 404 }, "{v}");
}

/// The whole history under `filtro`, newest first, read in pages of 2: (endpoint, status) of
/// each row and the total the pages state.
async fn historico(srv: &TestServer, key: &str, filter: &str) -> (Vec<(String, u64)>, u64) {
    let mut itens = Vec::new();
    let mut total = 0;
    for page in 1.. {
        let (st, v) = get(
            srv,
            key,
            &format!("/v1/historico?size=2&page={page}{filter}"),
        )
        .await;
        assert_eq!(st, 200, "{v}");
        total = v["total"].as_u64().unwrap();
        let page: Vec<_> = v["itens"].as_array().unwrap().clone();
        if page.is_empty() {
            break;
        }
        for i in page {
            itens.push((
                i["endpoint"].as_str().unwrap().to_owned(),
                i["statusHttp"].as_u64().unwrap(),
            ));
        }
    }
    assert_eq!(itens.len() as u64, total, "pages against total ({filter})");
    (itens, total)
}

/// (endpoint, status) rows, from a compact form: `c`/`C` car 404/200, `k`/`K` completo.
fn lines(form: &str) -> Vec<(String, u64)> {
    form.chars()
        .map(|ch| {
            let e = if ch.eq_ignore_ascii_case(&'c') {
                "/v1/car/{codigo}"
            } else {
                "/v1/car/{codigo}/completo"
            };
            (e.to_owned(), if ch.is_uppercase() { 200 } else { 404 })
        })
        .collect()
}

/// Waits (at most 10 s) until the history's total is `n`: the job's pass may be the job
/// loop's, still running when `advance` returns.
async fn total_arrives(srv: &TestServer, key: &str, n: u64) {
    for _ in 0..100 {
        if historico(srv, key, "").await.1 == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("history total never reached {n}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_uncharged_errors_go_and_everything_else_stays_consistent() {
    for database in databases("retencao_erros").await {
        let srv = TestServer::builder()
            .database(&database.url)
            .rate_limit(None)
            .config(|c| c.error_retention_days = Some(90))
            .start()
            .await
            .unwrap();
        let c = srv.conta().create().await.unwrap();
        let key = &c.api_key;
        // Day 0, oldest first: c C k c K (3 errors, 2 charges).
        for (ok, completo) in [
            (false, false),
            (true, false),
            (false, true),
            (false, false),
            (true, true),
        ] {
            consulta(&srv, key, ok, completo).await;
        }
        srv.advance(40 * DAY).await.unwrap();
        // Day 40: c C.
        consulta(&srv, key, false, false).await;
        consulta(&srv, key, true, false).await;
        let (all, n) = historico(&srv, key, "").await;
        assert_eq!(all, lines("CcKckCc"), "{}", database.name);
        assert_eq!(n, 7);
        let saldo = srv.conta_state(&c).await.unwrap().saldo;
        // Day 100: the day-0 errors are past 90 days; the day-40 one is not.
        srv.advance(60 * DAY).await.unwrap();
        total_arrives(&srv, key, 4).await;
        let (all, _) = historico(&srv, key, "").await;
        assert_eq!(all, lines("CcKC"), "{}: old errors gone", database.name);
        assert_eq!(srv.conta_state(&c).await.unwrap().saldo, saldo);
        let l = srv.ledger(&c).await.unwrap();
        assert!(l.is_consistent(), "{}: {l:?}", database.name);
        // Day 100: c C k; every filter's pages and totals agree with the rows left.
        consulta(&srv, key, false, false).await;
        consulta(&srv, key, true, false).await;
        consulta(&srv, key, false, true).await;
        let cases = [
            ("", "kCcCcKC"),
            ("&status=erro", "kcc"),
            ("&status=sucesso", "CCKC"),
            ("&endpoint=/v1/car/{codigo}", "CcCcC"),
            ("&endpoint=/v1/car/{codigo}&status=erro", "cc"),
            ("&endpoint=/v1/car/{codigo}/completo", "kK"),
            ("&endpoint=/v1/car/{codigo}/completo&status=erro", "k"),
        ];
        for (filter, expected) in cases {
            let (itens, _) = historico(&srv, key, filter).await;
            assert_eq!(itens, lines(expected), "{}: {filter}", database.name);
        }
        // /v1/uso (30 days) counts what day 100 recorded; the ledger check holds.
        let (st, uso) = get(&srv, key, "/v1/uso").await;
        assert_eq!(st, 200, "{uso}");
        let quantities: u64 = uso["itens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["quantidade"].as_u64().unwrap())
            .sum();
        assert_eq!(quantities, 3, "{}: {uso}", database.name);
        let l = srv.ledger(&c).await.unwrap();
        assert!(l.is_consistent(), "{}: {l:?}", database.name);
        srv.shutdown().await;
    }
}

/// A retention under 30 days is refused at start with a Portuguese message naming the minimum;
/// `sempre` and the environment variable are read.
#[test]
fn a_retention_under_30_days_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let out = crate::server_process::serve_refused(&url, &["--retencao-erros-dias", "10"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("mínimo é 30 dias"),
        "{err}"
    );
    let out =
        crate::server_process::serve_refused(&url, &[], &[("CARAPI_RETENCAO_ERROS_DIAS", "0")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("sempre"), "{err}");
    assert!(
        !dir.path().join("carapi.db").exists(),
        "refused before the database is created"
    );
}
