//! No document nor CAR code in the SDK's tracing output, at any level, and no document nor
//! owner name in the errors an application logs (the client is the data controller of what it
//! looks up: docs/contrato.md, "What the service does"); money events are WARNs.

use std::io::Write;
use std::sync::{Arc, Mutex};

use carapi_sdk::{CpfCnpj, RetryPolicy};
use carapi_test_double::{Fault, TestServer};
use carapi_tests::Environment;
use rust_decimal_macros::dec;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::{CODIGO_REAL, cpf_without_cars};

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
fn owner() -> CpfCnpj {
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
    let env = server.block_on(Environment::new());
    let conta = server.block_on(env.conta(dec!(100)));
    let doc = owner();
    let without_cars = cpf_without_cars();
    let names = owners_of(CODIGO_REAL);

    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(FmtSpan::FULL)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        client_rt.block_on(async {
            let c = env
                .builder(&conta.api_key)
                .retry(RetryPolicy::disabled())
                .build()
                .unwrap();
            c.proprietario(doc.formatted()).await.unwrap();
            c.car(CODIGO_REAL).await.unwrap();
            c.car_completo(CODIGO_REAL).await.unwrap(); // owner names and documents
            // The errors an application logs as they come, at every level.
            let erros = [
                c.proprietario(&without_cars).await.unwrap_err(), // 404 whose message names it
                c.proprietario(wrong(&doc)).await.unwrap_err(),   // wrong check digits
                c.proprietario(&names[0]).await.unwrap_err(),     // a name where a document goes
                c.car(doc.formatted()).await.unwrap_err(),        // a document where a code goes
            ];
            for e in &erros {
                tracing::error!(error = %e, "falhou");
                tracing::warn!(error = ?e, "falhou");
                tracing::info!("{e:#?}");
                tracing::debug!(error = %e, source = ?std::error::Error::source(e));
            }
        });
    });
    server.block_on(async move { drop(env) });
    server.shutdown_background();

    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        out.contains("/v1/proprietario/{cpfCnpj}"),
        "events carry the route template: {out}"
    );
    assert!(out.contains("/v1/car/{codigoCar}"), "{out}");
    let wrong = wrong(&doc);
    let mut secrets = vec![
        doc.as_str().to_owned(),
        doc.formatted(),
        without_cars.clone(),
        wrong.clone(),
        wrong.chars().filter(char::is_ascii_digit).collect(),
    ];
    for p in carapi_service::dados::bundled()
        .iter()
        .filter(|i| i.codigo_car.as_str() == CODIGO_REAL)
        .flat_map(|i| i.proprietarios.iter())
    {
        secrets.push(p.documento.as_str().to_owned());
        secrets.push(p.documento.formatted());
        secrets.push(p.nome.clone());
    }
    assert!(!names.is_empty());
    for secret in &secrets {
        assert!(
            !out.contains(secret.as_str()),
            "{secret} in the logs:\n{out}"
        );
    }
    // The SDK's own events carry no code either (an error the application logs may).
    for line in out.lines().filter(|l| l.contains("carapi_sdk")) {
        assert!(!line.contains(&CODIGO_REAL[11..]), "{line}");
    }
}

/// The owner names of a bundled record.
fn owners_of(codigo: &str) -> Vec<String> {
    carapi_service::dados::bundled()
        .iter()
        .filter(|i| i.codigo_car.as_str() == codigo)
        .flat_map(|i| i.proprietarios.iter().map(|p| p.nome.clone()))
        .collect()
}

/// `doc` formatted with its last check digit changed: a document a user mistyped.
fn wrong(doc: &CpfCnpj) -> String {
    let mut f = doc.formatted();
    let last = f.pop().unwrap();
    f.push(if last == '9' {
        '0'
    } else {
        char::from(last as u8 + 1)
    });
    f
}

/// A subscriber at INFO sees a WARN for a lost charged answer, with the operation and the price
/// (and without the code).
#[test]
fn a_lost_charged_answer_is_a_warn_with_operation_and_price() {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let srv = server.block_on(TestServer::start()).unwrap();
    let conta = server
        .block_on(srv.conta().saldo(dec!(10)).create())
        .unwrap();
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        client_rt.block_on(async {
            let c = srv.client(&conta).unwrap();
            srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}/completo"));
            assert!(
                c.car_completo(CODIGO_REAL)
                    .await
                    .unwrap_err()
                    .may_have_charged()
            );
        });
    });
    server.block_on(async move { drop(srv) });
    server.shutdown_background();
    let out = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    let warn = out
        .lines()
        .find(|l| l.contains("WARN") && l.contains("carapi_sdk"))
        .unwrap_or_else(|| panic!("no WARN at INFO:\n{out}"));
    assert!(warn.contains("operation=\"car_completo\""), "{warn}");
    assert!(warn.contains("preco=2.30"), "{warn}");
    assert!(warn.contains("/v1/car/{codigoCar}/completo"), "{warn}");
    assert!(!out.contains(&CODIGO_REAL[11..]), "{out}");
}
