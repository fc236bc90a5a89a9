//! The receipt: in memory, chunk by chunk, and to a file without half files.

use carapi_sdk::Error;
use rust_decimal_macros::dec;
use wiremock::{MockServer, ResponseTemplate};

use crate::common::*;

fn pdf() -> Vec<u8> {
    let mut v = b"%PDF-1.7\n".to_vec();
    v.extend((0..200_000u32).map(|i| (i % 251) as u8));
    v.extend_from_slice(b"\n%%EOF\n");
    v
}

fn recibo_path() -> String {
    format!("/v1/car/{CODIGO}/recibo")
}

fn pdf_response() -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_raw(pdf(), "application/pdf")
        .insert_header(
            "content-disposition",
            format!("attachment; filename=\"{CODIGO}.pdf\"").as_str(),
        )
}

#[tokio::test]
async fn recibo_in_memory() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(pdf_response())
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let r = c.recibo(CODIGO).await.unwrap();
    assert_eq!(r.filename, format!("{CODIGO}.pdf"));
    assert_eq!(r.bytes.as_ref(), pdf().as_slice());
    assert_eq!(c.gasto().confirmado, dec!(11.00));
}

#[tokio::test]
async fn recibo_download_chunk_by_chunk() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(pdf_response())
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let mut d = c.recibo_download(CODIGO).await.unwrap();
    assert_eq!(
        c.gasto().confirmado,
        dec!(11.00),
        "charged once the 200 arrived"
    );
    assert_eq!(d.filename(), format!("{CODIGO}.pdf"));
    assert_eq!(d.content_length(), Some(pdf().len() as u64));
    let mut all = Vec::new();
    while let Some(chunk) = d.chunk().await.unwrap() {
        all.extend_from_slice(&chunk);
    }
    assert_eq!(all, pdf());
    assert_eq!(d.received(), pdf().len() as u64);
}

#[tokio::test]
async fn recibo_to_a_file_and_into_a_directory() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(pdf_response())
        .expect(2)
        .mount(&server)
        .await;
    let c = client(&server);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("meu.pdf");
    let info = c.recibo_to_file(CODIGO, &target).await.unwrap();
    assert_eq!(info.path, target);
    assert_eq!(info.bytes, pdf().len() as u64);
    assert_eq!(std::fs::read(&target).unwrap(), pdf());
    let info = c.recibo_to_file(CODIGO, dir.path()).await.unwrap();
    assert_eq!(info.path, dir.path().join(format!("{CODIGO}.pdf")));
    assert_eq!(std::fs::read(&info.path).unwrap(), pdf());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
}

#[tokio::test]
async fn a_failed_receipt_leaves_no_file_and_keeps_the_old_one() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(api_error(404, "RECIBO_NAO_ENCONTRADO", "sem recibo"))
        .mount(&server)
        .await;
    let c = client(&server);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("recibo.pdf");
    std::fs::write(&target, b"antigo").unwrap();
    let e = c.recibo_to_file(CODIGO, &target).await.unwrap_err();
    assert_eq!(e.code(), Some(carapi_sdk::ErrorCode::ReciboNaoEncontrado));
    assert_eq!(std::fs::read(&target).unwrap(), b"antigo");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert_eq!(c.gasto().confirmado, dec!(0));
}

#[tokio::test]
async fn an_unwritable_target_is_an_io_error_and_leaves_nothing() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(pdf_response())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let e = client(&server)
        .recibo_to_file(CODIGO, dir.path().join("nao/existe/x.pdf"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(
        received(&server, &recibo_path()).await,
        0,
        "a directory that does not exist is found before paying"
    );
}

#[tokio::test]
async fn recibo_to_a_file_reports_progress_from_the_charge_on() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(pdf_response())
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.pdf");
    let mut seen = vec![];
    let info = c
        .recibo_to_file_with_progress(CODIGO, &target, |p| seen.push(p))
        .await
        .unwrap();
    let total = pdf().len() as u64;
    assert_eq!(info.bytes, total);
    assert_eq!(
        seen.first().map(|p| p.received),
        Some(0),
        "first call at the 200"
    );
    assert!(seen.iter().all(|p| p.content_length == Some(total)));
    assert_eq!(seen.last().map(|p| p.received), Some(total));
    assert!(seen.windows(2).all(|w| w[0].received <= w[1].received));
    assert_eq!(std::fs::read(&target).unwrap(), pdf());
}

#[tokio::test]
async fn a_refused_receipt_never_calls_progress() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(api_error(404, "RECIBO_NAO_ENCONTRADO", "sem recibo"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut calls = 0;
    let e = client(&server)
        .recibo_to_file_with_progress(CODIGO, dir.path().join("r.pdf"), |_| calls += 1)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(carapi_sdk::ErrorCode::ReciboNaoEncontrado));
    assert_eq!(calls, 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn receipt_503_is_retried_and_uses_the_longer_timeout() {
    let server = MockServer::start().await;
    get(&recibo_path())
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "x"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get(&recibo_path())
        .respond_with(pdf_response().set_delay(std::time::Duration::from_millis(600)))
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(std::time::Duration::from_millis(200))
        .build()
        .unwrap();
    let r = c.recibo(CODIGO).await.unwrap();
    assert!(r.bytes.starts_with(b"%PDF-"));
    assert_eq!(received(&server, &recibo_path()).await, 2);
}
