use carapi_sdk::sandbox;
use carapi_service::ReciboMode;

use crate::helpers::*;

fn assert_pdf(r: &Resp, codigo: &str) {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.headers["content-type"], "application/pdf");
    assert_eq!(
        r.headers["content-disposition"],
        format!("attachment; filename=\"{codigo}.pdf\"")
    );
    assert!(r.body.starts_with(b"%PDF-"));
}

#[tokio::test]
async fn receipt_is_a_pdf_attachment_and_charged() {
    let app = App::new().await;
    let c = app.conta_com(20).await;
    let r = app
        .get(&c.api_key, &format!("/v1/car/{CODIGO}/recibo"))
        .await;
    assert_pdf(&r, CODIGO);
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 9.0);
    let h = app
        .historico(&c.api_key, "?endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D%2Frecibo")
        .await;
    assert_eq!(h["total"], 1);
    assert_eq!(h["itens"][0]["valorCobrado"], 11.0);
    // a second one no longer fits: 402 JSON, nothing debited
    let r = app
        .get(&c.api_key, &format!("/v1/car/{CODIGO}/recibo"))
        .await;
    r.error(402, "SALDO_INSUFICIENTE");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 9.0);
}

#[tokio::test]
async fn record_without_receipt_is_404_recibo_nao_encontrado() {
    let app = App::new().await;
    let c = app.conta_com(20).await;
    app.get(
        &c.api_key,
        &format!("/v1/car/{CODIGO_WITHOUT_RECIBO}/recibo"),
    )
    .await
    .error(404, "RECIBO_NAO_ENCONTRADO");
    // the record itself exists
    app.get(&c.api_key, &format!("/v1/car/{CODIGO_WITHOUT_RECIBO}"))
        .await
        .ok();
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 19.0);
}

#[tokio::test]
async fn sandbox_receipts() {
    let app = App::com(|c| c.recibo = ReciboMode::Unavailable).await;
    let c = app.conta_com(0).await;
    let r = app
        .get(
            &c.api_key,
            &format!("/v1/car/{}/recibo", sandbox::CAR_BASICO),
        )
        .await;
    assert_pdf(&r, sandbox::CAR_BASICO);
    let r = app
        .get(
            &c.api_key,
            &format!("/v1/car/{}/recibo", sandbox::CAR_NAO_EXISTE),
        )
        .await;
    assert_eq!(r.error(404, "CAR_NAO_ENCONTRADO")["sandbox"], true);
    let r = app
        .get(
            &c.api_key,
            &format!("/v1/car/{}/recibo", sandbox::CAR_SEM_SALDO),
        )
        .await;
    assert_eq!(r.error(402, "SALDO_INSUFICIENTE")["sandbox"], true);
    assert_eq!(app.historico(&c.api_key, "").await["total"], 0);
}

#[tokio::test]
async fn service_unavailable_503_is_reachable_by_configuration_and_not_charged() {
    let app = App::com(|c| c.recibo = ReciboMode::Unavailable).await;
    let c = app.conta_com(20).await;
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/recibo"))
        .await
        .error(503, "SERVICO_INDISPONIVEL");
    // input validation still comes first
    app.get(&c.api_key, "/v1/car/nope/recibo")
        .await
        .error(400, "CODIGO_CAR_INVALIDO");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 20.0);
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["itens"][1]["statusHttp"], 503);
    assert_eq!(h["itens"][1]["cobrado"], false);
}

#[tokio::test]
async fn streaming_failure_502_is_reachable_by_configuration_and_not_charged() {
    let app = App::com(|c| c.recibo = ReciboMode::FailureStream).await;
    let c = app.conta_com(20).await;
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/recibo"))
        .await
        .error(502, "RECIBO_INDISPONIVEL");
    // after validation: unknown and receipt-less records keep their 404s
    app.get(&c.api_key, &format!("/v1/car/{MISSING_CODIGO}/recibo"))
        .await
        .error(404, "CAR_NAO_ENCONTRADO");
    app.get(
        &c.api_key,
        &format!("/v1/car/{CODIGO_WITHOUT_RECIBO}/recibo"),
    )
    .await
    .error(404, "RECIBO_NAO_ENCONTRADO");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 20.0);
}
