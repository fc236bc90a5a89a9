use std::sync::Arc;

use crate::helpers::*;

/// 200 concurrent charged lookups on an account funded for 50: exactly 50 succeed, 150 get
/// 402, the balance ends at 0, and history, usage and the ledger agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_lookups_on_fifty_lookups_of_balance() {
    let app = Arc::new(App::new().await);
    let c = app.conta_com(50).await;
    let mut tasks = Vec::new();
    for _ in 0..200 {
        let app = app.clone();
        let key = c.api_key.clone();
        tasks.push(tokio::spawn(async move {
            app.get(&key, &format!("/v1/car/{CODIGO}")).await
        }));
    }
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
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 0.0);
    assert_eq!(s["usoHoje"]["requisicoes"], 200);
    assert_eq!(s["usoHoje"]["erros"], 150);
    assert_eq!(s["usoHoje"]["gasto"], 50.0);
    assert_eq!(s["usoMes"]["gasto"], 50.0);
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["total"], 200);
    assert_eq!(
        app.historico(&c.api_key, "?status=sucesso").await["total"],
        50
    );
    assert_eq!(
        app.historico(&c.api_key, "?status=erro").await["total"],
        150
    );
    // every charged row's balances chain down from 50 to 0, one real each
    let mut depois: Vec<f64> = Vec::new();
    for page in 1..=2 {
        let p = app
            .historico(&c.api_key, &format!("?status=sucesso&size=100&page={page}"))
            .await;
        for i in p["itens"].as_array().unwrap() {
            assert_eq!(i["valorCobrado"], 1.0);
            let (a, d) = (
                i["saldoAntes"].as_f64().unwrap(),
                i["saldoDepois"].as_f64().unwrap(),
            );
            assert!((a - d - 1.0).abs() < 1e-9);
            depois.push(d);
        }
    }
    depois.sort_by(f64::total_cmp);
    assert_eq!(depois, (0..50).map(f64::from).collect::<Vec<_>>());
    let uso = app.get(&c.api_key, "/v1/uso").await.ok();
    let item = &uso["itens"][0];
    assert_eq!(item["endpoint"], "/v1/car/{codigo}");
    assert_eq!(item["quantidade"], 200);
    assert_eq!(item["valorTotal"], 50.0);
    let ledger = app.store().ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    assert_eq!(ledger.saldo, carapi_service::Centavos::new(0));
    assert_eq!(ledger.debits, carapi_service::Centavos::new(5_000));
}
