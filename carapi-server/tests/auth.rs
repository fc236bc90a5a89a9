use axum::http::Method;
use carapi_sdk::sandbox;

use crate::helpers::*;

#[tokio::test]
async fn every_v1_route_requires_a_valid_bearer_key() {
    let app = App::new().await;
    let conta = app.conta_com(10).await;
    let routes = [
        (Method::GET, format!("/v1/car/{CODIGO}")),
        (Method::GET, format!("/v1/car/{CODIGO}/completo")),
        (Method::GET, format!("/v1/car/{CODIGO}/recibo")),
        (Method::GET, "/v1/proprietario/52998224725".to_owned()),
        (Method::GET, "/v1/saldo".to_owned()),
        (Method::GET, "/v1/historico".to_owned()),
        (Method::GET, "/v1/limites".to_owned()),
        (Method::PUT, "/v1/limites".to_owned()),
        (Method::GET, "/v1/uso".to_owned()),
        (Method::GET, "/v1/recarga/faixas".to_owned()),
        (Method::POST, "/v1/recarga".to_owned()),
        (
            Method::GET,
            "/v1/recarga/00000000-0000-0000-0000-000000000000".to_owned(),
        ),
        (Method::GET, "/v1/recargas".to_owned()),
        // sandbox values too (contract, "Authentication" 3)
        (Method::GET, format!("/v1/car/{}", sandbox::CAR_BASICO)),
        (
            Method::GET,
            format!("/v1/proprietario/{}", sandbox::CPF_DOIS_CARS),
        ),
    ];
    let wrong = format!("{}x", conta.api_key);
    for (m, route) in routes {
        for chave in [None, Some("car_nada"), Some(wrong.as_str()), Some("")] {
            let r = app.req(m.clone(), chave, &route, Some("{}")).await;
            let v = r.error(401, "TOKEN_INVALIDO");
            assert!(v.get("sandbox").is_none(), "{m} {route}: {v}");
        }
    }
    // other schemes are refused
    let r = app
        .send(
            axum::http::Request::get("/v1/saldo")
                .header("authorization", format!("Basic {}", conta.api_key))
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    r.error(401, "TOKEN_INVALIDO");
    // nothing was recorded nor debited
    assert_eq!(app.saldo(&conta.api_key).await["saldoReais"], 10.0);
    assert_eq!(app.historico(&conta.api_key, "").await["total"], 0);
}

#[tokio::test]
async fn keys_are_random_long_and_stored_hashed() {
    let app = App::new().await;
    let a = app.conta_com(1).await;
    let b = app.conta_com(1).await;
    assert_ne!(a.api_key, b.api_key);
    // at least 128 random bits: 64 hex characters after the prefix
    let hexa = a.api_key.strip_prefix("car_").unwrap();
    assert_eq!(hexa.len(), 64);
    assert!(hexa.bytes().all(|c| c.is_ascii_hexdigit()));
    let conta = app.store().conta(a.conta_id).await.unwrap().unwrap();
    assert_ne!(conta.chave_hash, a.api_key);
    assert_eq!(conta.chave_hash, carapi_service::auth::key_hash(&a.api_key));
    assert!(!format!("{conta:?}").contains(&a.api_key));
    assert!(
        !format!("{a:?}").contains(&a.api_key),
        "ContaCriada's Debug hides the key"
    );
    // the scheme is case-insensitive
    let r = app
        .send(
            axum::http::Request::get("/v1/saldo")
                .header("authorization", format!("bearer {}", a.api_key))
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    r.ok();
}

#[tokio::test]
async fn rate_limit_per_key_gives_429_with_retry_after() {
    let app = App::com(|c| c.rate_limit = std::num::NonZeroU32::new(10)).await;
    let a = app.conta_com(1).await;
    let b = app.conta_com(1).await;
    // 30 requests back to back cannot all fit in 10/s with a burst of 10.
    let mut limited = 0;
    for _ in 0..30 {
        let r = app.get(&a.api_key, "/v1/saldo").await;
        if r.status == 429 {
            let v = r.error(429, "LIMITE_EXCEDIDO");
            assert!(v.get("sandbox").is_none());
            let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=2).contains(&retry), "Retry-After {retry}");
            limited += 1;
        }
    }
    assert!(
        limited > 0,
        "the 10/s limit must refuse some of 30 immediate requests"
    );
    // another key is not affected by the first one's use
    app.get(&b.api_key, "/v1/saldo").await.ok();
    // sandbox lookups count toward no limit, the rate included: never 429, even now
    for _ in 0..30 {
        let v = app
            .get(
                &a.api_key,
                &format!("/v1/car/{}", carapi_sdk::sandbox::CAR_BASICO),
            )
            .await
            .ok();
        assert_eq!(v["sandbox"], true);
    }
}
