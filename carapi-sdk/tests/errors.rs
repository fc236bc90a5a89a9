//! Every error code of the contract decodes into its variant; fallbacks and decode paths.

use carapi_sdk::{Error, ErrorCode, RetryPolicy, sandbox};
use serde_json::json;
use wiremock::{MockServer, ResponseTemplate};

use crate::common::*;

#[tokio::test]
async fn every_contract_code_decodes_into_its_variant() {
    for code in ErrorCode::ALL {
        let status = code.status().unwrap_or(400);
        let server = MockServer::start().await;
        get("/v1/saldo")
            .respond_with(api_error(status, code.as_str(), "mensagem em português"))
            .expect(1)
            .mount(&server)
            .await;
        let c = builder(&server)
            .retry(RetryPolicy::disabled())
            .build()
            .unwrap();
        let e = c.saldo().await.unwrap_err();
        assert_eq!(e.code(), Some(code), "{code}");
        assert_eq!(e.status(), Some(status));
        let Error::Api(api) = &e else { panic!("{e:?}") };
        assert_eq!(api.message, "mensagem em português");
        assert!(!api.sandbox);
        assert_eq!(
            e.to_string(),
            format!("{status} {}: mensagem em português", code.as_str())
        );
    }
}

#[tokio::test]
async fn unknown_code_is_kept_as_other() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(api_error(418, "CODIGO_NOVO", "novo"))
        .mount(&server)
        .await;
    let e = client(&server).saldo().await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Other("CODIGO_NOVO".into())));
    assert_eq!(e.to_string(), "418 CODIGO_NOVO: novo");
}

#[tokio::test]
async fn sandbox_errors_carry_the_flag() {
    let server = MockServer::start().await;
    get(&car_path(sandbox::CAR_SEM_SALDO))
        .respond_with(ResponseTemplate::new(402).set_body_json(json!({
            "success": false, "error": "SALDO_INSUFICIENTE", "message": "Saldo insuficiente", "sandbox": true
        })))
        .expect(1)
        .mount(&server)
        .await;
    let e = client(&server)
        .car(sandbox::CAR_SEM_SALDO)
        .await
        .unwrap_err();
    assert!(e.is_sandbox());
    assert_eq!(e.to_string(), "402 SALDO_INSUFICIENTE: Saldo insuficiente");
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn non_json_error_bodies_fall_back() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ResponseTemplate::new(500).set_body_string("<h1>oops</h1>"))
        .mount(&server)
        .await;
    get("/v1/limites")
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let c = client(&server);
    let e = c.uso().await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Other("HTTP_500".into())));
    assert_eq!(e.to_string(), "500 HTTP_500: <h1>oops</h1>");
    let e = c.limites().await.unwrap_err();
    assert_eq!(e.status(), Some(401));
    assert_eq!(e.api().unwrap().message, "Unauthorized");
}

#[tokio::test]
async fn decode_errors_name_the_json_path() {
    let server = MockServer::start().await;
    let mut body = car_body(CODIGO);
    body["dataConsulta"] = json!("ontem");
    get(&car_path(CODIGO))
        .respond_with(ok(body))
        .mount(&server)
        .await;
    get("/v1/historico")
        .respond_with(ok(json!({"success": true, "page": 1, "size": 20, "total": 2, "totalPaginas": 1,
                                "itens": [consumo_item(1), {"data": "2026-11-21T10:00:00Z", "endpoint": "x"}]})))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/uso")
        .respond_with(ResponseTemplate::new(200).set_body_string("não é json"))
        .mount(&server)
        .await;
    let c = client(&server);
    match c.car(CODIGO).await.unwrap_err() {
        Error::Decode {
            path,
            operation,
            status,
            ..
        } => {
            assert_eq!(path, "dataConsulta");
            assert_eq!(operation, "car");
            assert_eq!(status, 200);
        }
        e => panic!("{e:?}"),
    }
    match c.historico(&Default::default()).await.unwrap_err() {
        Error::Decode { path, source, .. } => {
            assert_eq!(path, "itens[1]");
            assert!(source.to_string().contains("statusHttp"), "{source}");
        }
        e => panic!("{e:?}"),
    }
    let mut wrong = consumo_item(2);
    wrong["statusHttp"] = json!("duzentos");
    get("/v1/historico")
        .respond_with(ok(json!({"success": true, "page": 1, "size": 20, "total": 1, "totalPaginas": 1, "itens": [wrong]})))
        .mount(&server)
        .await;
    match c.historico(&Default::default()).await.unwrap_err() {
        Error::Decode { path, .. } => assert_eq!(path, "itens[0].statusHttp"),
        e => panic!("{e:?}"),
    }
    let e = c.uso().await.unwrap_err();
    assert!(matches!(e, Error::Decode { .. }), "{e:?}");
    assert!(e.to_string().contains("uso"));
}

#[tokio::test]
async fn unknown_fields_never_break_decoding() {
    let server = MockServer::start().await;
    let mut body = car_body(CODIGO);
    body["campoNovo"] = json!({"x": 1});
    body["dados"]["outroCampo"] = json!([1, 2]);
    get(&car_path(CODIGO))
        .respond_with(ok(body))
        .mount(&server)
        .await;
    client(&server).car(CODIGO).await.unwrap();
}

/// `Display` says its own level only and each cause appears once in the `source()` chain
/// (Rust API guidelines C-GOOD-ERR): none of the causes' text is repeated in the error's own.
fn assert_display_is_this_level_only(e: &Error) {
    let own = e.to_string();
    let mut cause = std::error::Error::source(e);
    assert!(cause.is_some(), "{e:?} has a source");
    while let Some(c) = cause {
        let text = c.to_string();
        assert!(
            !own.contains(&text),
            "Display {own:?} repeats the cause {text:?}"
        );
        cause = c.source();
    }
}

#[tokio::test]
async fn transport_and_decode_errors_do_not_repeat_their_cause() {
    // A port nothing listens on: connection refused over a real socket.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let c = carapi_sdk::Client::builder()
        .base_url(url)
        .api_key(KEY)
        .retry(RetryPolicy::disabled())
        .build()
        .unwrap();
    let e = c.saldo().await.unwrap_err();
    assert!(matches!(e, Error::Transport { sent: false, .. }), "{e:?}");
    assert_display_is_this_level_only(&e);
    assert_eq!(
        e.to_string(),
        "falha de comunicação em saldo (tentativa 1; requisição não enviada)"
    );

    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ResponseTemplate::new(200).set_body_string("não é json"))
        .mount(&server)
        .await;
    let e = client(&server).uso().await.unwrap_err();
    assert!(matches!(e, Error::Decode { .. }), "{e:?}");
    assert_display_is_this_level_only(&e);
}
