//! The client-side rate limiter. Only lower bounds are asserted (the limiter guarantees them);
//! upper bounds are generous.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use futures::future::join_all;
use wiremock::MockServer;

use crate::common::*;

#[tokio::test]
async fn spaces_requests_at_the_configured_rate() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ok(
            serde_json::json!({"success": true, "periodoDias": 30, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = builder(&server)
        .rate_limit(NonZeroU32::new(20))
        .build()
        .unwrap();
    let t = Instant::now();
    // 21 concurrent requests at 20/s: the 21st may start only 1 s after the first.
    let results = join_all((0..21).map(|_| c.uso())).await;
    let elapsed = t.elapsed();
    assert!(results.iter().all(Result::is_ok));
    assert!(
        elapsed >= Duration::from_millis(950),
        "21 requests at 20/s took {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(20));
    assert_eq!(received(&server, "/v1/uso").await, 21);
}

#[tokio::test]
async fn default_is_the_contract_limit_of_10_per_second() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ok(
            serde_json::json!({"success": true, "periodoDias": 30, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .build()
        .unwrap();
    let t = Instant::now();
    let clones: Vec<_> = (0..11).map(|_| c.clone()).collect();
    join_all(clones.iter().map(|c| c.uso())).await;
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "11 requests at 10/s took {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn retries_pass_through_the_limiter() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "x"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/uso")
        .respond_with(ok(
            serde_json::json!({"success": true, "periodoDias": 30, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = builder(&server)
        .rate_limit(NonZeroU32::new(2))
        .build()
        .unwrap();
    let t = Instant::now();
    // Two requests fit in a second at 2/s: the first call and its retry; the next call is
    // the third request.
    c.uso().await.unwrap();
    assert!(t.elapsed() < Duration::from_millis(900), "a burst of 2");
    c.uso().await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "the retry went out after {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn the_contracts_ten_per_second_go_at_once() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ok(
            serde_json::json!({"success": true, "periodoDias": 30, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .build()
        .unwrap();
    let t = Instant::now();
    join_all((0..10).map(|_| c.uso())).await;
    // Spaced 100 ms apart, as before, they took at least 900 ms.
    assert!(
        t.elapsed() < Duration::from_millis(900),
        "10 requests at 10/s took {:?}",
        t.elapsed()
    );
}

#[tokio::test]
async fn can_be_turned_off() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ok(
            serde_json::json!({"success": true, "periodoDias": 30, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = client(&server); // rate_limit(None)
    let t = Instant::now();
    join_all((0..30).map(|_| c.uso())).await;
    // 30 requests at 10/s would take at least 2.9 s.
    assert!(
        t.elapsed() < Duration::from_millis(2900),
        "took {:?}",
        t.elapsed()
    );
}
