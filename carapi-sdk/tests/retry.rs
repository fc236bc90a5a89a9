//! The retry rules: what is retried, what never is, Retry-After, and the budget.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use carapi_sdk::{Client, Error, NovaRecarga, RetryPolicy};
use rust_decimal_macros::dec;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::*;

fn slow(body: serde_json::Value) -> ResponseTemplate {
    ok(body).set_delay(Duration::from_secs(3))
}

#[tokio::test]
async fn retries_503_then_succeeds() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "x"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .mount(&server)
        .await;
    client(&server).saldo().await.unwrap();
    assert_eq!(received(&server, "/v1/saldo").await, 2);
}

#[tokio::test]
async fn retries_502_on_a_charged_lookup_and_charges_once() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(api_error(502, "RECIBO_INDISPONIVEL", "x"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = client(&server);
    c.car(CODIGO).await.unwrap();
    assert_eq!(received(&server, &car_path(CODIGO)).await, 3);
    assert_eq!(c.gasto().confirmado, dec!(1.00));
}

#[tokio::test]
async fn gives_up_after_max_attempts() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "fora"))
        .mount(&server)
        .await;
    let e = builder(&server)
        .retry(fast_retry().with_max_attempts(4))
        .build()
        .unwrap()
        .uso()
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(carapi_sdk::ErrorCode::ServicoIndisponivel));
    assert_eq!(received(&server, "/v1/uso").await, 4);
}

#[tokio::test]
async fn never_retries_400_401_402_404_500() {
    for (status, code) in [
        (400, "CODIGO_CAR_INVALIDO"),
        (401, "TOKEN_INVALIDO"),
        (402, "SALDO_INSUFICIENTE"),
        (404, "CAR_NAO_ENCONTRADO"),
        (500, "ERRO_INTERNO"),
    ] {
        let server = MockServer::start().await;
        get(&car_path(CODIGO))
            .respond_with(api_error(status, code, "x"))
            .mount(&server)
            .await;
        let c = client(&server);
        let e = c.car(CODIGO).await.unwrap_err();
        assert_eq!(e.status(), Some(status));
        assert_eq!(
            received(&server, &car_path(CODIGO)).await,
            1,
            "{status} must not be retried"
        );
        assert_eq!(c.gasto().confirmado, dec!(0), "errors are never charged");
    }
}

#[tokio::test]
async fn short_retry_after_429_is_honoured() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(
            api_error(429, "LIMITE_EXCEDIDO", "devagar").insert_header("retry-after", "1"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .mount(&server)
        .await;
    let t = Instant::now();
    client(&server).saldo().await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(950),
        "waited {:?}",
        t.elapsed()
    );
    assert_eq!(received(&server, "/v1/saldo").await, 2);
}

#[tokio::test]
async fn long_retry_after_429_is_returned_at_once() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(
            api_error(429, "LIMITE_EXCEDIDO", "limite diário").insert_header("retry-after", "3600"),
        )
        .mount(&server)
        .await;
    get("/v1/uso")
        .respond_with(api_error(429, "LIMITE_EXCEDIDO", "sem retry-after"))
        .mount(&server)
        .await;
    let c = client(&server);
    let t = Instant::now();
    let e = c.car(CODIGO).await.unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(
        e.api().unwrap().retry_after,
        Some(Duration::from_secs(3600))
    );
    assert_eq!(
        e.limite(),
        Some(carapi_sdk::EscopoLimite::Diario),
        "no header: read from Retry-After"
    );
    assert!(
        !e.is_retryable(),
        "a daily limit lasts until Brasília midnight: retrying hammers for hours"
    );
    assert_eq!(received(&server, &car_path(CODIGO)).await, 1);
    c.uso().await.unwrap_err();
    assert_eq!(
        received(&server, "/v1/uso").await,
        1,
        "a 429 without Retry-After may be a daily limit"
    );
}

#[tokio::test]
async fn max_retry_after_is_configurable() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(api_error(429, "LIMITE_EXCEDIDO", "x").insert_header("retry-after", "1"))
        .mount(&server)
        .await;
    let c = builder(&server)
        .retry(fast_retry().with_max_retry_after(Duration::ZERO))
        .build()
        .unwrap();
    c.saldo().await.unwrap_err();
    assert_eq!(received(&server, "/v1/saldo").await, 1);
}

#[tokio::test]
async fn a_lost_charged_response_is_not_retried() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(slow(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    match c.car(CODIGO).await.unwrap_err() {
        ref e @ Error::Transport {
            sent,
            attempts,
            operation,
            ref source,
            ..
        } => {
            assert!(e.may_have_charged());
            assert!(!e.is_retryable(), "re-sending may charge twice");
            assert!(sent);
            assert_eq!(attempts, 1);
            assert_eq!(operation, "car");
            assert!(source.is_timeout());
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(received(&server, &car_path(CODIGO)).await, 1);
    assert_eq!(c.gasto().confirmado, dec!(0));
    assert_eq!(
        c.gasto().incerto,
        dec!(1.00),
        "possibly charged: counted as uncertain"
    );
}

#[tokio::test]
async fn lost_responses_of_every_charged_lookup_are_not_retried() {
    let server = MockServer::start().await;
    let any = ResponseTemplate::new(200).set_delay(Duration::from_secs(3));
    Mock::given(method("GET"))
        .respond_with(any)
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(Duration::from_millis(200))
        .receipt_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    assert!(c.car_completo(CODIGO).await.unwrap_err().is_transport());
    assert!(
        c.proprietario("52998224725")
            .await
            .unwrap_err()
            .is_transport()
    );
    assert!(c.recibo(CODIGO).await.unwrap_err().is_transport());
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_lost_charged_response_is_retried_when_opted_in() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(slow(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(Duration::from_millis(300))
        .retry_charged_consultas(true)
        .build()
        .unwrap();
    match c.car(CODIGO).await.unwrap_err() {
        Error::Transport {
            sent: true,
            attempts: 3,
            ..
        } => {}
        e => panic!("{e:?}"),
    }
    assert_eq!(received(&server, &car_path(CODIGO)).await, 3);
}

#[tokio::test]
async fn lost_responses_of_free_requests_are_retried() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(slow(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    c.saldo().await.unwrap();
    assert_eq!(received(&server, "/v1/saldo").await, 2);
}

#[tokio::test]
async fn criar_recarga_is_retried_after_a_lost_response() {
    let server = MockServer::start().await;
    let body = json!({
        "success": true, "reaproveitada": true, "recargaId": RECARGA_ID, "paymentId": "pay_1",
        "valor": 500.0, "status": "Pendente", "qrCode": "000201", "qrCodeBase64": "iVBORw0KGgo=",
        "previewBonus": {"percentualBonus": 0.0, "valorBonus": 0.0, "totalCreditado": 500.0}, "message": "reaproveitada"
    });
    Mock::given(method("POST"))
        .and(path("/v1/recarga"))
        .respond_with(slow(body.clone()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/recarga"))
        .respond_with(ok(body))
        .mount(&server)
        .await;
    let c = builder(&server)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let r = c
        .criar_recarga(&NovaRecarga {
            valor: dec!(500),
            confirmar_novos_precos: false,
        })
        .await
        .unwrap();
    assert!(r.reaproveitada);
    assert_eq!(received(&server, "/v1/recarga").await, 2);
}

#[tokio::test]
async fn connection_refused_is_retried_even_for_charged_lookups() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let c = Client::builder()
        .base_url(format!("http://127.0.0.1:{port}"))
        .api_key(KEY)
        .rate_limit(None)
        .retry(fast_retry())
        .precos(carapi_sdk::Precos::ATUAIS)
        .build()
        .unwrap();
    match c.car(CODIGO).await.unwrap_err() {
        e @ Error::Transport {
            sent: false,
            attempts: 3,
            ..
        } => {
            assert!(e.is_retryable());
            assert!(e.to_string().contains("não enviada"), "{e}");
        }
        e => panic!("{e:?}"),
    }
}

#[tokio::test]
async fn the_retry_budget_runs_out() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "x"))
        .mount(&server)
        .await;
    // 12 tokens, 5 per retry: two retries in all, then every call is attempted once.
    let c = builder(&server)
        .retry(fast_retry().with_max_attempts(10).with_budget(12))
        .build()
        .unwrap();
    c.uso().await.unwrap_err();
    assert_eq!(received(&server, "/v1/uso").await, 3);
    c.uso().await.unwrap_err();
    assert_eq!(received(&server, "/v1/uso").await, 4);
    // Clones share the budget.
    c.clone().uso().await.unwrap_err();
    assert_eq!(received(&server, "/v1/uso").await, 5);
}

#[tokio::test]
async fn disabled_policy_attempts_once() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(api_error(503, "SERVICO_INDISPONIVEL", "x"))
        .mount(&server)
        .await;
    let c = builder(&server)
        .retry(RetryPolicy::disabled())
        .build()
        .unwrap();
    assert!(c.uso().await.unwrap_err().is_retryable());
    assert_eq!(received(&server, "/v1/uso").await, 1);
}
