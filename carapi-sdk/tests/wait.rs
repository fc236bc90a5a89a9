//! `wait_for_recarga` against a mock (the interval logic itself is unit-tested with tokio's
//! paused clock in `src/wait.rs`; here the public 5 s floor is used for real, once).

use std::time::{Duration, Instant};

use carapi_sdk::{Error, RecargaStatus};
use uuid::Uuid;
use wiremock::MockServer;

use crate::common::*;

fn id() -> Uuid {
    Uuid::parse_str(RECARGA_ID).unwrap()
}

fn status_path() -> String {
    format!("/v1/recarga/{RECARGA_ID}")
}

#[tokio::test]
async fn returns_at_once_when_already_final() {
    let server = MockServer::start().await;
    get(&status_path())
        .respond_with(ok(recarga_status("Confirmado")))
        .expect(1)
        .mount(&server)
        .await;
    let st = client(&server)
        .wait_for_recarga(id(), Duration::from_secs(600))
        .await
        .unwrap();
    assert!(st.pago);
    assert_eq!(st.total_creditado, Some(rust_decimal_macros::dec!(525)));
}

#[tokio::test]
async fn polls_at_least_5_seconds_apart_until_confirmed() {
    let server = MockServer::start().await;
    get(&status_path())
        .respond_with(ok(recarga_status("Pendente")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get(&status_path())
        .respond_with(ok(recarga_status("Confirmado")))
        .mount(&server)
        .await;
    // Asking for a faster poll is silently raised to the contract's 5 s.
    let c = builder(&server)
        .poll_interval(Duration::from_millis(10))
        .build()
        .unwrap();
    let t = Instant::now();
    let st = c
        .wait_for_recarga(id(), Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(st.status, RecargaStatus::Confirmado);
    assert!(
        t.elapsed() >= Duration::from_secs(5),
        "polled after {:?}",
        t.elapsed()
    );
    assert_eq!(received(&server, &status_path()).await, 2);
}

#[tokio::test]
async fn times_out_without_polling_faster() {
    let server = MockServer::start().await;
    get(&status_path())
        .respond_with(ok(recarga_status("Pendente")))
        .mount(&server)
        .await;
    let t = Instant::now();
    let e = client(&server)
        .wait_for_recarga(id(), Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(t.elapsed() >= Duration::from_millis(950));
    match e {
        Error::Timeout {
            recarga_id,
            last_status,
            ..
        } => {
            assert_eq!(recarga_id, id());
            assert_eq!(last_status, Some(RecargaStatus::Pendente));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(received(&server, &status_path()).await, 1);
}

#[tokio::test]
async fn not_found_ends_the_wait() {
    let server = MockServer::start().await;
    get(&status_path())
        .respond_with(api_error(404, "RECARGA_NAO_ENCONTRADA", "não encontrada"))
        .mount(&server)
        .await;
    let e = client(&server)
        .wait_for_recarga(id(), Duration::from_secs(600))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(carapi_sdk::ErrorCode::RecargaNaoEncontrada));
}
