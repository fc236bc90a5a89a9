//! The spend guard: refuses before sending, only 200s count, race-free under concurrency.

use std::time::Duration;

use carapi_sdk::{Client, Error, Precos, sandbox};
use futures::future::join_all;
use rust_decimal_macros::dec;
use wiremock::MockServer;

use crate::common::*;

#[tokio::test]
async fn refuses_the_lookup_that_would_pass_the_cap() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = builder(&server).max_spend(dec!(2.50)).build().unwrap();
    c.car(CODIGO).await.unwrap();
    c.car(CODIGO).await.unwrap();
    match c.car(CODIGO).await.unwrap_err() {
        Error::SpendLimit {
            limite,
            gasto,
            reservado,
            preco,
        } => {
            assert_eq!((limite, gasto, preco), (dec!(2.50), dec!(2.00), dec!(1.00)));
            assert_eq!(reservado, dec!(0));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(
        received(&server, &car_path(CODIGO)).await,
        2,
        "the refused lookup was never sent"
    );
    assert_eq!(c.gasto().confirmado, dec!(2.00));
    assert_eq!(c.max_spend(), Some(dec!(2.50)));
}

#[tokio::test]
async fn prices_come_from_saldo_and_non_200_releases_the_reservation() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&Precos::LEGADOS)))
        .expect(1)
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .mount(&server)
        .await;
    get(&car_path(CODIGO_2))
        .respond_with(api_error(404, "CAR_NAO_ENCONTRADO", "x"))
        .mount(&server)
        .await;
    let c = Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .max_spend(dec!(1.00))
        .build()
        .unwrap();
    for _ in 0..3 {
        assert_eq!(c.car(CODIGO_2).await.unwrap_err().status(), Some(404));
    }
    assert_eq!(c.gasto().confirmado, dec!(0));
    c.car(CODIGO).await.unwrap();
    c.car(CODIGO).await.unwrap(); // 2 x 0.50 legacy = the cap exactly
    assert!(matches!(
        c.car(CODIGO).await.unwrap_err(),
        Error::SpendLimit { .. }
    ));
    assert_eq!(c.gasto().confirmado, dec!(1.00));
}

#[tokio::test]
async fn concurrent_lookups_never_pass_the_cap() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)).set_delay(Duration::from_millis(200)))
        .mount(&server)
        .await;
    let c = builder(&server).max_spend(dec!(5)).build().unwrap();
    let results = join_all((0..20).map(|_| {
        let c = c.clone();
        tokio::spawn(async move { c.car(CODIGO).await })
    }))
    .await;
    let ok = results
        .iter()
        .filter(|r| r.as_ref().unwrap().is_ok())
        .count();
    let refused = results
        .iter()
        .filter(|r| matches!(r.as_ref().unwrap(), Err(Error::SpendLimit { .. })))
        .count();
    assert_eq!((ok, refused), (5, 15));
    assert_eq!(received(&server, &car_path(CODIGO)).await, 5);
    assert_eq!(c.gasto().confirmado, dec!(5));
}

#[tokio::test]
async fn each_lookup_has_its_price() {
    let server = MockServer::start().await;
    get(&format!("/v1/car/{CODIGO}/completo"))
        .respond_with(ok(car_completo_body(CODIGO)))
        .mount(&server)
        .await;
    get("/v1/proprietario/52998224725")
        .respond_with(ok(serde_json::json!({
            "success": true, "total": 0, "limite": 200, "truncado": false, "itens": []
        })))
        .mount(&server)
        .await;
    get(&format!("/v1/car/{CODIGO}/recibo"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_raw(b"%PDF-1.7".to_vec(), "application/pdf"),
        )
        .mount(&server)
        .await;
    let c = builder(&server).max_spend(dec!(15.90)).build().unwrap();
    c.car_completo(CODIGO).await.unwrap();
    c.proprietario("52998224725").await.unwrap();
    assert_eq!(c.gasto().confirmado, dec!(4.90));
    c.recibo(CODIGO).await.unwrap();
    assert_eq!(c.gasto().confirmado, dec!(15.90));
    assert!(matches!(
        c.car_completo(CODIGO).await.unwrap_err(),
        Error::SpendLimit { .. }
    ));
}

#[tokio::test]
async fn sandbox_values_pass_a_zero_cap() {
    let server = MockServer::start().await;
    let mut body = car_body(sandbox::CAR_BASICO);
    body["sandbox"] = serde_json::json!(true);
    get(&car_path(sandbox::CAR_BASICO))
        .respond_with(ok(body))
        .expect(1)
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .expect(0)
        .mount(&server)
        .await;
    let c = builder(&server).max_spend(dec!(0)).build().unwrap();
    c.car(sandbox::CAR_BASICO).await.unwrap();
    assert!(matches!(
        c.car(CODIGO).await.unwrap_err(),
        Error::SpendLimit { .. }
    ));
}

#[tokio::test]
async fn with_a_cap_unknown_prices_refuse_before_sending() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(api_error(401, "TOKEN_INVALIDO", "chave inválida"))
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .expect(0)
        .mount(&server)
        .await;
    let c = Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .max_spend(dec!(100))
        .build()
        .unwrap();
    assert_eq!(
        c.car(CODIGO).await.unwrap_err().code(),
        Some(carapi_sdk::ErrorCode::TokenInvalido)
    );
}

#[tokio::test]
async fn without_a_cap_the_prices_are_read_alongside_the_first_lookup() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&Precos::LEGADOS)).set_delay(Duration::from_millis(1500)))
        .expect(1)
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .build()
        .unwrap();
    let c2 = c.clone();
    let consulta = tokio::spawn(async move { c2.car(CODIGO).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        received(&server, &car_path(CODIGO)).await,
        1,
        "the lookup went out without waiting for the prices"
    );
    assert!(
        !consulta.is_finished(),
        "it returns once the prices are known"
    );
    consulta.await.unwrap().unwrap();
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.nao_precificadas),
        (dec!(0.50), 0),
        "exact when the call returns"
    );
}

/// A lookup dropped after its request left runs to its end in the client's task: its 200 is
/// counted as spent (not merely possibly spent) once `close` returns; one dropped before it
/// left is never sent nor counted.
#[tokio::test]
async fn a_lookup_dropped_after_sending_is_still_counted_and_one_dropped_before_is_never_sent() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)).set_delay(Duration::from_millis(400)))
        .mount(&server)
        .await;
    let c = builder(&server)
        .max_spend(dec!(1.50))
        .rate_limit(std::num::NonZeroU32::new(1))
        .build()
        .unwrap();
    // Sent, then the caller gave up (a timeout, a select!, an aborted handler).
    let r = tokio::time::timeout(Duration::from_millis(150), c.car(CODIGO)).await;
    assert!(r.is_err(), "cancelled");
    assert_eq!(received(&server, &car_path(CODIGO)).await, 1);
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.incerto),
        (dec!(0), dec!(1.00)),
        "in flight, its caller gone: possibly charged until its answer arrives"
    );
    assert!(
        matches!(c.car(CODIGO).await, Err(Error::SpendLimit { .. })),
        "the cap counts it: 1.00 + 1.00 > 1.50"
    );
    assert_eq!(c.close().await, 0, "the purchase ended");
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.incerto),
        (dec!(1.00), dec!(0)),
        "its 200 arrived after its caller left, and was counted"
    );
    // Cancelled while waiting for the rate limiter: never sent, never counted.
    let c = builder(&server)
        .rate_limit(std::num::NonZeroU32::new(1))
        .build()
        .unwrap();
    c.car(CODIGO).await.unwrap();
    let before = received(&server, &car_path(CODIGO)).await;
    let r = tokio::time::timeout(Duration::from_millis(100), c.car(CODIGO)).await;
    assert!(r.is_err());
    assert_eq!(c.close().await, 0);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        received(&server, &car_path(CODIGO)).await,
        before,
        "never sent after its caller left"
    );
    assert_eq!(c.gasto().incerto, dec!(0));
}
