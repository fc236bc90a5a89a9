//! The adversarial suite: the server as a hostile client sees it, over a real socket, on
//! SQLite and (with `DATABASE_URL`) PostgreSQL. Hostile credentials on all 13 operations,
//! cross-account reads, concurrent charged lookups whose clients hang up, hostile path and
//! query values; the ledger check of every account after each.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::CODIGO;
use crate::network::{Server, raw, read_until_close, requested, servers};

/// The contract's 13 operations: method, path, body.
fn operations(recarga: &str) -> Vec<(&'static str, String, &'static [u8])> {
    vec![
        ("GET", format!("/v1/car/{CODIGO}"), b""),
        ("GET", format!("/v1/car/{CODIGO}/completo"), b""),
        ("GET", format!("/v1/car/{CODIGO}/recibo"), b""),
        ("GET", "/v1/proprietario/52998224725".into(), b""),
        ("GET", "/v1/saldo".into(), b""),
        ("GET", "/v1/historico".into(), b""),
        ("GET", "/v1/limites".into(), b""),
        (
            "PUT",
            "/v1/limites".into(),
            br#"{"limiteDiarioRequisicoes":7}"#,
        ),
        ("GET", "/v1/uso".into(), b""),
        ("GET", "/v1/recarga/faixas?valor=1000".into(), b""),
        ("POST", "/v1/recarga".into(), br#"{"valor":500}"#),
        ("GET", format!("/v1/recarga/{recarga}"), b""),
        ("GET", "/v1/recargas".into(), b""),
    ]
}

/// `Authorization` lines a hostile client sends (`None`: no header at all).
fn hostile_credentials(valid: &str) -> Vec<Option<Vec<u8>>> {
    let mut v: Vec<Option<Vec<u8>>> = vec![
        None,
        Some(b"Authorization:".to_vec()),
        Some(b"Authorization: Bearer".to_vec()),
        Some(b"Authorization: Bearer ".to_vec()),
        Some(format!("Authorization: Bearer {}", "A".repeat(20_000)).into_bytes()),
        Some(b"Authorization: Basic dXNlcjpwYXNz".to_vec()),
        Some(format!("Authorization: Bearer {valid}x").into_bytes()),
        Some(format!("Authorization: Bearer {}", valid.to_uppercase()).into_bytes()),
        Some(format!("Authorization: {valid}").into_bytes()),
        Some(format!("Authorization: Bearer {}", &valid[..valid.len() - 1]).into_bytes()),
    ];
    let mut nul = b"Authorization: Bearer ".to_vec();
    nul.extend_from_slice(valid.as_bytes());
    nul.insert(30, 0);
    v.push(Some(nul));
    let mut high = format!("Authorization: Bearer {valid}").into_bytes();
    high.push(0xFF);
    v.push(Some(high));
    v
}

#[tokio::test]
async fn hostile_credentials_on_all_13_operations_get_nothing() {
    for s in servers("adv_credenciais", |_| {}).await {
        let a = s.conta(100).await;
        let recarga = create_recarga(&s, &a.api_key).await;
        for (method, path, body) in operations(&recarga) {
            for cred in hostile_credentials(&a.api_key) {
                let extras: Vec<&[u8]> = cred.iter().map(Vec::as_slice).collect();
                let r = raw(&s.srv, &requested(method, &path, &extras, body)).await;
                let line = cred.as_deref().map(String::from_utf8_lossy);
                if r.status == 400 && r.body.is_empty() {
                    // hyper's own refusal of a header it cannot parse (NUL): no handler ran.
                    continue;
                }
                assert_eq!(
                    r.status, 401,
                    "[{}] {method} {path} with {line:?}: {r:?}",
                    s.name
                );
                assert!(r.has("www-authenticate: bearer"), "[{}] {r:?}", s.name);
                assert_eq!(r.json()["error"], "TOKEN_INVALIDO");
            }
        }
        assert_eq!(s.saldo(&a.api_key).await, 100.0, "[{}]", s.name);
        assert_eq!(s.historico_total(&a.api_key).await, 0, "[{}]", s.name);
        let (_, _, v) = s.get(&a.api_key, "/v1/recargas").await;
        assert_eq!(
            v["total"], 1,
            "[{}] only the top-up made with the key: {v}",
            s.name
        );
        let (_, _, v) = s.get(&a.api_key, "/v1/limites").await;
        assert_eq!(
            v["limiteDiarioRequisicoes"],
            Value::Null,
            "[{}] {v}",
            s.name
        );
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}

async fn create_recarga(s: &Server, key: &str) -> String {
    let r = s
        .http
        .post(s.url("/v1/recarga"))
        .bearer_auth(key)
        .json(&json!({"valor": 500}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "[{}]", s.name);
    let v: Value = r.json().await.unwrap();
    v["recargaId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn one_account_cannot_read_anothers_top_ups_or_history() {
    for s in servers("adv_contas", |_| {}).await {
        let a = s.conta(100).await;
        let b = s.conta(100).await;
        let (st, _, _) = s.get(&a.api_key, &format!("/v1/car/{CODIGO}")).await;
        assert_eq!(st, 200);
        let recarga = create_recarga(&s, &a.api_key).await;
        let (st, _, v) = s.get(&b.api_key, &format!("/v1/recarga/{recarga}")).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (404, Some("RECARGA_NAO_ENCONTRADA")),
            "[{}] {v}",
            s.name
        );
        for path in [
            "/v1/historico".to_owned(),
            format!("/v1/historico?busca={}", &CODIGO[..10]),
            "/v1/historico?status=sucesso".to_owned(),
            "/v1/recargas".to_owned(),
            "/v1/recargas?status=Pendente".to_owned(),
        ] {
            let (st, _, v) = s.get(&b.api_key, &path).await;
            assert_eq!(
                (st, v["total"].as_u64()),
                (200, Some(0)),
                "[{}] {path}: {v}",
                s.name
            );
        }
        let (_, _, v) = s.get(&b.api_key, "/v1/uso").await;
        assert_eq!(v["itens"], json!([]), "[{}] {v}", s.name);
        let (_, _, v) = s.get(&b.api_key, "/v1/saldo").await;
        assert_eq!(
            (
                v["saldoReais"].as_f64(),
                v["usoMes"]["requisicoes"].as_u64()
            ),
            (Some(100.0), Some(0)),
            "[{}] {v}",
            s.name
        );
        // B paying A's top-up id through the public API is impossible; A's balance is A's.
        assert_eq!(s.saldo(&a.api_key).await, 99.0);
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn concurrent_charged_lookups_whose_clients_hang_up_keep_the_ledger() {
    for s in servers("adv_desconexao", |_| {}).await {
        let a = s.conta(10).await;
        let addr = s.srv.addr();
        let chave = Arc::new(a.api_key.clone());
        let mut tasks = Vec::new();
        for i in 0..60 {
            let chave = chave.clone();
            tasks.push(tokio::spawn(async move {
                let path = if i % 3 == 0 {
                    format!("/v1/car/{CODIGO}/completo")
                } else {
                    format!("/v1/car/{CODIGO}")
                };
                let auth = format!("Authorization: Bearer {chave}");
                let mut tcp = TcpStream::connect(addr).await.unwrap();
                tcp.write_all(&requested("GET", &path, &[auth.as_bytes()], b""))
                    .await
                    .unwrap();
                if i % 2 == 0 {
                    // Hang up at once, before the answer.
                    drop(tcp);
                    None
                } else {
                    Some(read_until_close(&mut tcp).await.status)
                }
            }));
        }
        let mut status = Vec::new();
        for t in tasks {
            status.extend(t.await.unwrap());
        }
        assert!(
            status.iter().all(|s| matches!(s, 200 | 402)),
            "[{}] {status:?}",
            s.name
        );
        let store = s.store();
        let name = s.name;
        let conta = a.conta_id;
        // Shutting down waits for every handler still running.
        s.srv.shutdown().await;
        let r = store.ledger(conta).await.unwrap().unwrap();
        assert!(r.is_consistent(), "[{name}] {r:?}");
        assert_eq!(
            r.saldo,
            r.saldo_inicial.checked_sub(r.cobrado_historico).unwrap(),
            "[{name}] {r:?}"
        );
        assert!(
            r.cobrado_historico.get() > 0,
            "[{name}] nothing was charged: {r:?}"
        );
        crate::network::verify_ledgers(name, store.as_ref()).await;
    }
}

#[tokio::test]
async fn hostile_path_and_query_values_get_contract_errors_never_500() {
    for s in servers("adv_valores", |_| {}).await {
        let a = s.conta(100).await;
        let paths = [
            "/v1/car/%00",
            "/v1/car/%FF%FE",
            "/v1/car/..%2F..%2Fetc%2Fpasswd",
            "/v1/car/'%20OR%201=1--",
            "/v1/car/%25",
            "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47%00",
            "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47%00/completo",
            "/v1/car/%F0%9F%92%A5/recibo",
            "/v1/proprietario/%00",
            "/v1/proprietario/..%2F..%2Fetc",
            "/v1/proprietario/529.982.247-2%00",
            "/v1/recarga/%00",
            "/v1/recarga/00000000-0000-0000-0000-000000000000",
            "/v1/historico?busca=%00",
            "/v1/historico?busca=%25",
            "/v1/historico?busca=_",
            "/v1/historico?busca=%5C",
            "/v1/historico?status=AAA",
            "/v1/historico?endpoint=%00",
            "/v1/historico?page=1&page=2",
            "/v1/historico?size=%00",
            "/v1/historico?page=%FF",
            "/v1/recargas?status=AAA",
            "/v1/recargas?status=%00",
            "/v1/recarga/faixas?valor=NaN",
            "/v1/recarga/faixas?valor=inf",
            "/v1/recarga/faixas?valor=%00",
            "/v1/recarga/faixas?valor=1e99999",
        ];
        let mut responses = Vec::new();
        for path in paths {
            let (st, h, v) = s.get(&a.api_key, path).await;
            assert!(st < 500, "[{}] {path}: {st} {v}", s.name);
            assert_eq!(h["content-type"], "application/json", "[{}] {path}", s.name);
            if st != 200 {
                assert_eq!(v["success"], false, "[{}] {path}: {v}", s.name);
            }
            responses.push((path, st, v["error"].clone()));
        }
        let long = format!("/v1/historico?busca={}", "x".repeat(5_000));
        let (st, _, _) = s.get(&a.api_key, &long).await;
        assert_eq!(st, 200, "[{}]", s.name);
        // Lookups of garbage are recorded (failed, free); a NUL is kept out of the stored key.
        let (_, _, h) = s.get(&a.api_key, "/v1/historico?busca=%00&size=100").await;
        assert_eq!(h["total"], 0, "[{}] {h}", s.name);
        assert_eq!(s.saldo(&a.api_key).await, 100.0, "[{}]", s.name);
        let (_, _, h) = s.get(&a.api_key, "/v1/historico?size=100").await;
        let itens = h["itens"].as_array().unwrap();
        assert!(
            itens.iter().all(|i| i["cobrado"] == false),
            "[{}] {h}",
            s.name
        );
        let with_garbage = itens
            .iter()
            .filter(|i| {
                i["endpoint"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("/v1/car/"))
            })
            .count();
        assert!(
            with_garbage >= 6,
            "[{}] garbage CAR lookups are recorded: {h}",
            s.name
        );
        s.ledger_clean().await;
        s.srv.shutdown().await;
        responses.sort_by_key(|r| r.0);
        println!("{responses:?}");
    }
}

/// Both stores answer the hostile values alike.
#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn both_stores_answer_hostile_values_alike() {
    let servers = servers("adv_iguais", |_| {}).await;
    if servers.len() < 2 {
        println!("adv_iguais: DATABASE_URL not set; only SQLite ran");
        return;
    }
    let mut seen: Vec<Vec<(u16, Value)>> = Vec::new();
    for s in &servers {
        let a = s.conta(100).await;
        let mut v = Vec::new();
        for path in [
            "/v1/historico?busca=%00",
            "/v1/car/%00",
            "/v1/proprietario/%00",
            "/v1/historico?busca=%00",
        ] {
            let (st, _, body) = s.get(&a.api_key, path).await;
            v.push((st, body["error"].clone()));
        }
        seen.push(v);
    }
    assert_eq!(seen[0], seen[1]);
    for s in servers {
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}
