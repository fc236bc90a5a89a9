//! The debug event of every response, and that the key never appears in logs.

use std::io::Write;
use std::sync::{Arc, Mutex};

use wiremock::MockServer;

use crate::common::*;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn every_response_emits_a_debug_event_without_the_key() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // The global subscriber (the only test here that sets one): a thread-local one loses the
    // events of callsites that the tests running in parallel registered first (their interest
    // is cached without it). Other tests' events land in the buffer too; none may hold the key.
    tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");

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
    let c = client(&server);
    c.uso().await.unwrap();
    tracing::debug!("{c:?}");

    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(out.contains("carapi_sdk::http"), "{out}");
    assert!(out.contains("carapi_sdk.request"), "{out}");
    assert!(out.contains("operation=\"uso\""), "{out}");
    assert!(
        out.contains("status=503") && out.contains("status=200"),
        "{out}"
    );
    assert!(out.contains("attempt=2"), "{out}");
    assert!(out.contains("route=\"/v1/uso\""), "{out}");
    assert!(
        !out.contains("path="),
        "the path may hold a document: {out}"
    );
    assert!(out.contains("elapsed_ms="), "{out}");
    assert!(!out.contains(KEY), "the key leaked: {out}");
}
