use std::sync::atomic::{AtomicU32, Ordering};

use rust_decimal::Decimal;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::*;
use crate::{Precos, sandbox};

/// The process id [`pid`] reports when not 0: a test pretends to be a child after `fork()`.
pub(super) static FAKE_PID: AtomicU32 = AtomicU32::new(0);

const CODIGO: &str = "DF-5300108-CCD63AE5A8A04271941A8A4CD8829672";

fn car(codigo: &str) -> serde_json::Value {
    json!({
        "success": true,
        "cache": false,
        "dados": {"codigoCar": codigo},
        "dataConsulta": "2026-11-21T10:00:00-03:00",
        "dataExpiracao": null
    })
}

/// A mock server on a runtime of its own thread (the test thread has none, as a plain
/// `fn main`).
fn server_on_own_runtime() -> (tokio::runtime::Runtime, MockServer) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        for codigo in [CODIGO, sandbox::CAR_BASICO] {
            Mock::given(method("GET"))
                .and(path(format!("/v1/car/{codigo}")))
                .respond_with(ResponseTemplate::new(200).set_body_json(car(codigo)))
                .mount(&server)
                .await;
        }
        server
    });
    (rt, server)
}

/// One test for every blocking behaviour: the fake process id is global.
#[test]
fn every_operation_from_plain_threads_refused_inside_a_runtime_and_fresh_after_fork() {
    let (rt, server) = server_on_own_runtime();
    let client = Client::builder()
        .base_url(server.uri())
        .api_key("k")
        .precos(Precos::ATUAIS)
        .build_blocking()
        .unwrap();
    assert_eq!(client.car(CODIGO).unwrap().dados.codigo_car, CODIGO);
    let other = client.clone();
    std::thread::spawn(move || other.car(CODIGO).unwrap())
        .join()
        .unwrap();
    assert_eq!(
        client.gasto().confirmado,
        Decimal::from(2),
        "clones share the spend"
    );

    let e = rt.block_on(async { client.car(CODIGO) }).unwrap_err();
    assert!(
        matches!(&e, Error::Config(m) if m.contains("runtime tokio")),
        "{e}"
    );

    // A child after fork(): the parent's runtime is left alone, a fresh one serves the child,
    // which counts its own spending from the fork on.
    FAKE_PID.store(std::process::id() + 1, Ordering::SeqCst);
    assert_eq!(client.gasto().confirmado, Decimal::ZERO);
    assert_eq!(client.car(CODIGO).unwrap().dados.codigo_car, CODIGO);
    assert_eq!(client.gasto().confirmado, Decimal::ONE);
    assert!(client.car(sandbox::CAR_BASICO).is_ok());
    FAKE_PID.store(0, Ordering::SeqCst);
    drop(client);
    rt.block_on(async move { drop(server) });
}
