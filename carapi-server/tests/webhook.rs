use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use carapi_service::pix::webhook::{PixEvent, SIGNATURE_HEADER, sign};

use crate::helpers::*;

fn delivery(secret: &str, event: &PixEvent) -> Request<Body> {
    let body = serde_json::to_vec(event).unwrap();
    Request::post("/webhooks/pix")
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, sign(secret, &body, chrono::Utc::now()))
        .body(Body::from(body))
        .unwrap()
}

async fn recarga(app: &App, key: &str, valor: u32) -> (String, String) {
    let v = app
        .post(key, "/v1/recarga", &format!(r#"{{"valor": {valor}}}"#))
        .await
        .ok();
    (
        v["recargaId"].as_str().unwrap().to_owned(),
        v["paymentId"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn signed_webhook_credits_amount_plus_bonus_once() {
    let app = App::new().await;
    let c = app.conta_com(3).await;
    let (id, payment) = recarga(&app, &c.api_key, 2500).await;
    // the webhook is only a hint: the provider's book must have the charge paid
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(&payment, chrono::Utc::now())
        .await
        .unwrap();
    let secret = app.state.webhook_secret().await.unwrap().to_string();
    let v = app
        .send(delivery(
            &secret,
            &PixEvent::pago(&payment, chrono::Utc::now()),
        ))
        .await
        .ok();
    assert_eq!(v["creditada"], true);
    assert_eq!(v["recargaId"], id.as_str());
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 3.0 + 2700.0);
    // repeats change nothing
    for _ in 0..3 {
        let v = app
            .send(delivery(
                &secret,
                &PixEvent::pago(&payment, chrono::Utc::now()),
            ))
            .await
            .ok();
        assert_eq!(v["creditada"], false);
    }
    assert_eq!(
        carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
            .await
            .unwrap(),
        0
    );
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 2703.0);
    let ledger = app.store().ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
}

#[tokio::test]
async fn a_replayed_delivery_older_than_five_minutes_is_refused_and_credits_nothing() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let (_, payment) = recarga(&app, &c.api_key, 500).await;
    let now = chrono::Utc::now();
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(&payment, now)
        .await
        .unwrap();
    let secret = app.state.webhook_secret().await.unwrap().to_string();
    let body = serde_json::to_vec(&PixEvent::pago(&payment, now)).unwrap();
    // A delivery captured six minutes ago: its MAC is valid, its timestamp is not.
    let old = now - chrono::Duration::minutes(6);
    let replay = Request::post("/webhooks/pix")
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, sign(&secret, &body, old))
        .body(Body::from(body.clone()))
        .unwrap();
    let v = app.send(replay).await.error(401, "TOKEN_INVALIDO");
    assert!(v["message"].as_str().unwrap().contains("janela"), "{v}");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 0.0);
    // The same event signed now is credited.
    let v = app
        .send(delivery(&secret, &PixEvent::pago(&payment, now)))
        .await
        .ok();
    assert_eq!(v["creditada"], true);
}

#[tokio::test]
async fn bad_or_missing_signature_is_rejected_and_changes_nothing() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let (_, payment) = recarga(&app, &c.api_key, 500).await;
    let event = PixEvent::pago(&payment, chrono::Utc::now());
    app.send(delivery("segredo-errado", &event))
        .await
        .error(401, "TOKEN_INVALIDO");
    let body = serde_json::to_vec(&event).unwrap();
    let without = Request::post("/webhooks/pix")
        .body(Body::from(body.clone()))
        .unwrap();
    app.send(without).await.error(401, "TOKEN_INVALIDO");
    // signature of another body
    let other = serde_json::to_vec(&PixEvent::pago("PIXOUTRO", chrono::Utc::now())).unwrap();
    let swapped = Request::post("/webhooks/pix")
        .header(
            SIGNATURE_HEADER,
            sign(
                &app.state.webhook_secret().await.unwrap(),
                &other,
                chrono::Utc::now(),
            ),
        )
        .body(Body::from(body))
        .unwrap();
    app.send(swapped).await.error(401, "TOKEN_INVALIDO");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 0.0);
    // the webhook does not take a bearer key instead of a signature
    let r = app
        .send(
            Request::post("/webhooks/pix")
                .header("authorization", format!("Bearer {}", c.api_key))
                .body(Body::from(serde_json::to_vec(&event).unwrap()))
                .unwrap(),
        )
        .await;
    r.error(401, "TOKEN_INVALIDO");
    // unknown payment (well signed) is 404; other statuses are acknowledged and ignored
    let secret = app.state.webhook_secret().await.unwrap().to_string();
    app.send(delivery(
        &secret,
        &PixEvent::pago("PIXDESCONHECIDO", chrono::Utc::now()),
    ))
    .await
    .error(404, "RECARGA_NAO_ENCONTRADA");
    let ignored = PixEvent {
        payment_id: payment.clone(),
        status: "criado".into(),
        paid_at: None,
    };
    assert_eq!(
        app.send(delivery(&secret, &ignored)).await.ok()["creditada"],
        false
    );
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 0.0);
}

#[tokio::test]
async fn reconciliation_credits_when_the_webhook_never_arrives() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let (id, payment) = recarga(&app, &c.api_key, 5000).await;
    let (_, other) = recarga(&app, &c.api_key, 700).await;
    // not paid yet: nothing happens
    assert_eq!(
        carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
            .await
            .unwrap(),
        0
    );
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(&payment, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(
        carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
            .await
            .unwrap(),
        0
    );
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 5500.0);
    assert_eq!(
        app.get(&c.api_key, &format!("/v1/recarga/{id}")).await.ok()["status"],
        "Confirmado"
    );
    // a late webhook for it changes nothing; the other one is still pending
    let secret = app.state.webhook_secret().await.unwrap().to_string();
    assert_eq!(
        app.send(delivery(
            &secret,
            &PixEvent::pago(&payment, chrono::Utc::now())
        ))
        .await
        .ok()["creditada"],
        false
    );
    assert_eq!(
        app.get(&c.api_key, "/v1/recargas?status=Pendente")
            .await
            .ok()["itens"][0]["valorPago"],
        700.0
    );
    let _ = other;
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 5500.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_webhook_20_times_concurrently_while_reconciliation_runs_credits_once() {
    let app = Arc::new(App::new().await);
    let c = app.conta_com(1).await;
    for round in 0..3 {
        let (_, payment) = recarga(&app, &c.api_key, 1000 + round).await;
        app.state
            .psp
            .as_ref()
            .unwrap()
            .pay(&payment, chrono::Utc::now())
            .await
            .unwrap();
        let secret = app.state.webhook_secret().await.unwrap().to_string();
        let mut tasks = Vec::new();
        for i in 0..20 {
            let app = app.clone();
            let payment = payment.clone();
            let secret = secret.clone();
            tasks.push(tokio::spawn(async move {
                let mut n = 0;
                if i % 5 == 0 {
                    // reconciliation passes interleaved with the deliveries
                    n += carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
                        .await
                        .unwrap();
                }
                let v = app
                    .send(delivery(
                        &secret,
                        &PixEvent::pago(&payment, chrono::Utc::now()),
                    ))
                    .await
                    .ok();
                n + u32::from(v["creditada"] == true)
            }));
        }
        let reconciled = {
            let app = app.clone();
            tokio::spawn(async move {
                carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
                    .await
                    .unwrap()
            })
        };
        let mut credits = 0;
        for t in tasks {
            credits += t.await.unwrap();
        }
        credits += reconciled.await.unwrap();
        assert_eq!(credits, 1, "credited {credits} times");
    }
    // amount + 5 % bonus, three times, exactly once each
    let expected = 1.0 + (1000.0 + 50.0) + (1001.0 + 50.05) + (1002.0 + 50.10);
    let saldo = app.saldo(&c.api_key).await["saldoReais"].as_f64().unwrap();
    assert!((saldo - expected).abs() < 1e-9, "{saldo} != {expected}");
    let ledger = app.store().ledger(c.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    assert_eq!(
        ledger.creditado_recargas,
        carapi_service::Centavos::new(315_315)
    );
}
