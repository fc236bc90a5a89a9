//! One test per fault kind: what the client sees, and that the ledger stays exact.

use std::time::Duration;

use carapi_sdk::{Error, ErrorCode, EscopoLimite, dec};
use carapi_test_double::{Fault, FaultLimit, TestServer};

use super::on_each_database;
use crate::{CODIGO_REAL, assert_api_error};

/// The ledger check of every account the test created.
async fn ledger_exact(srv: &TestServer, conta: &carapi_service::ContaCriada) {
    let state = srv.conta_state(conta).await.unwrap();
    assert!(state.ledger_consistent, "{state:?}");
}

#[tokio::test]
async fn a_contract_error_answers_before_the_handler_and_charges_nothing() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::error(ErrorCode::ErroInterno).on("/v1/car/{codigoCar}"));
        assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::ErroInterno);
        // One request only: the next one is served and charged once.
        c.car(CODIGO_REAL).await.unwrap();
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!(state.debited, dec!(1.00));
        ledger_exact(&srv, &conta).await;
    })
    .await;
}

#[tokio::test]
async fn erro_pix_creates_no_top_up() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        // Every attempt (the SDK re-sends a 502), until cleared.
        srv.inject(Fault::error(ErrorCode::ErroPix).on("/v1/recarga").always());
        let fresh = carapi_sdk::NovaRecarga::new(dec!(500));
        assert_api_error(c.criar_recarga(&fresh).await, ErrorCode::ErroPix);
        let page = c.recargas(&Default::default()).await.unwrap();
        assert_eq!(page.total, 0, "no top-up after ERRO_PIX");
        srv.clear_faults();
        let r = c.criar_recarga(&fresh).await.unwrap();
        assert!(!r.reaproveitada);
        ledger_exact(&srv, &conta).await;
    })
    .await;
}

#[tokio::test]
async fn a_daily_429_reports_its_limit_and_is_not_retried() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::limite(FaultLimit::Diario, 3600).on("/v1/car/{codigoCar}"));
        let e = assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);
        assert_eq!(e.retry_after, Some(Duration::from_secs(3600)));
        assert_eq!(e.limite, Some(EscopoLimite::Diario));
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(0));
    })
    .await;
}

#[tokio::test]
async fn a_reset_before_the_answer_charges_nothing() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::ResetConnection.on("/v1/car/{codigoCar}"));
        let e = c.car(CODIGO_REAL).await.unwrap_err();
        assert!(matches!(e, Error::Transport { .. }), "{e:?}");
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!(state.debited, dec!(0), "the handler never ran");
        ledger_exact(&srv, &conta).await;
    })
    .await;
}

#[tokio::test]
async fn a_charge_committed_then_dropped_is_charged_once_and_not_resent() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}"));
        let e = c.car(CODIGO_REAL).await.unwrap_err();
        assert!(e.may_have_charged(), "{e:?}");
        assert!(!e.is_retryable());
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!(state.debited, dec!(1.00), "charged once, never twice");
        assert_eq!(state.saldo, dec!(9.00));
        ledger_exact(&srv, &conta).await;
    })
    .await;
}

#[tokio::test]
async fn a_receipt_cut_after_its_headers_leaves_no_file_and_one_charge() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(50)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::CutBody { bytes: 500 }.on("/v1/car/{codigoCar}/recibo"));
        let dir = tempfile::tempdir().unwrap();
        let destination = dir.path().join("recibo.pdf");
        let e = c
            .recibo_to_file(CODIGO_REAL, &destination)
            .await
            .unwrap_err();
        assert!(e.may_have_charged(), "the 200 arrived: {e:?}");
        assert!(!destination.exists(), "no half PDF");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(11.00));
        ledger_exact(&srv, &conta).await;
    })
    .await;
}

#[tokio::test]
async fn recibo_indisponivel_before_the_headers_is_free() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(50)).create().await.unwrap();
        let c = srv
            .client_builder(&conta)
            .retry(carapi_sdk::RetryPolicy::disabled())
            .build()
            .unwrap();
        srv.inject(Fault::error(ErrorCode::ReciboIndisponivel).on("/v1/car/{codigoCar}/recibo"));
        assert_api_error(c.recibo(CODIGO_REAL).await, ErrorCode::ReciboIndisponivel);
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(0));
    })
    .await;
}

#[tokio::test]
async fn a_delay_makes_the_client_time_out() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv
            .client_builder(&conta)
            .timeout(Duration::from_millis(300))
            .retry(carapi_sdk::RetryPolicy::disabled())
            .build()
            .unwrap();
        srv.inject(Fault::delay(Duration::from_secs(2)).on("/v1/saldo"));
        let e = c.saldo().await.unwrap_err();
        assert!(matches!(e, Error::Transport { .. }), "{e:?}");
        // The rule is spent: the next call is served at once.
        c.saldo().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn rules_are_per_account_and_per_count() {
    on_each_database(|srv| async move {
        let a = srv.conta().create().await.unwrap();
        let b = srv.conta().create().await.unwrap();
        let (ca, cb) = (srv.client(&a).unwrap(), srv.client(&b).unwrap());
        let ca = ca.with_timeout(Duration::from_secs(5));
        srv.inject(
            Fault::error(ErrorCode::ErroInterno)
                .on("/v1/limites")
                .of_conta(a.conta_id)
                .next_ones(2),
        );
        cb.limites().await.unwrap();
        assert_api_error(ca.limites().await, ErrorCode::ErroInterno);
        cb.limites().await.unwrap();
        assert_api_error(ca.limites().await, ErrorCode::ErroInterno);
        ca.limites().await.unwrap();
    })
    .await;
}

#[test]
#[should_panic(expected = "rota desconhecida")]
fn a_typo_in_a_route_template_fails_the_test() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let srv = TestServer::start().await.unwrap();
        srv.inject(Fault::ResetConnection.on("/v1/carro/{codigo}"));
    });
}

/// Reads everything `req` gets back over a raw socket: the bytes, and how the stream ended.
async fn raw(base: &str, req: String) -> (Vec<u8>, std::io::Result<usize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tcp.read(&mut buf).await {
            Ok(0) => return (received, Ok(0)),
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(e) => return (received, Err(e)),
        }
    }
}

#[tokio::test]
async fn the_connection_ends_with_a_tcp_reset_and_a_cut_body_after_its_headers() {
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(50)).create().await.unwrap();
    let requested = |path: &str| {
        format!(
            "GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
            conta.api_key
        )
    };
    srv.inject(Fault::ResetConnection.on("/v1/saldo"));
    let (bytes, end) = raw(&srv.base_url(), requested("/v1/saldo")).await;
    assert!(bytes.is_empty(), "nothing answered");
    let e = end.expect_err("a reset, not an orderly close");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");

    srv.inject(Fault::CutBody { bytes: 100 }.on("/v1/car/{codigoCar}/recibo"));
    let path = format!("/v1/car/{CODIGO_REAL}/recibo");
    let (bytes, end) = raw(&srv.base_url(), requested(&path)).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    assert!(body.starts_with("%PDF"), "{body:?}");
    let declared: usize = text
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })
        .expect("content-length")
        .trim()
        .parse()
        .unwrap();
    assert!(declared > 100, "the whole PDF was announced");
    assert_eq!(bytes.len() - text.find("\r\n\r\n").unwrap() - 4, 100);
    assert_eq!(end.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset);
}
