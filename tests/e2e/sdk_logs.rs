//! No document nor CAR code in the SDK's tracing output, at any level (the client is the data
//! controller of what it looks up: docs/contrato.md, "What the service does").

use std::io::Write;
use std::sync::{Arc, Mutex};

use carapi_sdk::{CpfCnpj, RetryPolicy};
use carapi_tests::Ambiente;
use rust_decimal_macros::dec;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::{CODIGO_REAL, cpf_sem_cars};

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

/// A document that owns CARs in the bundled data.
fn dono() -> CpfCnpj {
    carapi_service::dados::bundled()
        .iter()
        .flat_map(|i| i.proprietarios.iter().map(|p| p.documento.clone()))
        .next()
        .expect("the bundled data has owners")
}

/// Every event and span (with their fields) of the client's thread at TRACE, while the server
/// runs on its own runtime's threads (its own logs are not the SDK's).
#[test]
fn trace_output_of_lookups_never_holds_the_document_or_the_code() {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let amb = server.block_on(Ambiente::new_for());
    let conta = server.block_on(amb.conta(dec!(100)));
    let doc = dono();
    let sem_cars = cpf_sem_cars();

    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::FULL)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let cliente_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        cliente_rt.block_on(async {
            let c = amb
                .builder(&conta.api_key)
                .retry(RetryPolicy::disabled())
                .build()
                .unwrap();
            c.proprietario(doc.formatado()).await.unwrap();
            c.proprietario(&sem_cars).await.unwrap_err(); // 404 whose message names it
            c.car(CODIGO_REAL).await.unwrap();
        });
    });
    server.block_on(async move { drop(amb) });
    server.shutdown_background();

    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        out.contains("/v1/proprietario/{cpfCnpj}"),
        "events carry the route template: {out}"
    );
    assert!(out.contains("/v1/car/{codigoCar}"), "{out}");
    for secret in [
        doc.as_str().to_owned(),
        doc.formatado(),
        sem_cars.clone(),
        CODIGO_REAL.to_owned(),
        CODIGO_REAL[11..].to_owned(),
    ] {
        assert!(!out.contains(&secret), "{secret} in the logs:\n{out}");
    }
}
