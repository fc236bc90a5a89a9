use axum::body::Body;
use axum::http::{Method, Request};

use crate::helpers::*;

#[tokio::test]
async fn unknown_routes_and_wrong_methods_are_api_error_json() {
    let app = App::new().await;
    let c = app.conta_com(1).await;
    for (m, p) in [
        (Method::GET, "/"),
        (Method::GET, "/v1"),
        (Method::GET, "/v1/nada"),
        (Method::GET, "/v2/saldo"),
        (Method::GET, "/v1/car"),
        (
            Method::GET,
            "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47/outro",
        ),
    ] {
        let r = app.req(m, Some(&c.api_key), p, None).await;
        assert_eq!(r.headers["content-type"], "application/json");
        r.error(404, "SPEC_NAO_ENCONTRADA");
    }
    for (m, p) in [
        (Method::POST, "/v1/saldo"),
        (Method::DELETE, "/v1/limites"),
        (Method::GET, "/webhooks/pix"),
        (Method::PUT, "/v1/recarga"),
    ] {
        let r = app.req(m, Some(&c.api_key), p, Some("{}")).await;
        assert_eq!(r.headers["content-type"], "application/json");
        r.error(405, "SPEC_NAO_ENCONTRADA");
    }
}

#[tokio::test]
async fn internal_errors_are_500_erro_interno_without_details() {
    let app = App::new().await;
    let c = app.conta_com(1).await;
    app.sqlite.close().await;
    for p in [
        "/v1/saldo",
        "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    ] {
        let r = app.get(&c.api_key, p).await;
        let v = r.error(500, "ERRO_INTERNO");
        let msg = v["message"].as_str().unwrap().to_lowercase();
        for leak in ["sqlx", "pool", "closed", "database", "sqlite"] {
            assert!(!msg.contains(leak), "{msg}");
        }
    }
}

#[tokio::test]
async fn json_bodies_with_any_content_type_and_errors_never_plain_text() {
    let app = App::new().await;
    let c = app.conta_com(1).await;
    // no content type: still read as JSON
    let r = app
        .send(
            Request::put("/v1/limites")
                .header("authorization", format!("Bearer {}", c.api_key))
                .body(Body::from(r#"{"limiteDiarioRequisicoes":5}"#))
                .unwrap(),
        )
        .await;
    assert_eq!(r.ok()["limiteDiarioRequisicoes"], 5);
    // wrong content type with garbage
    let r = app
        .send(
            Request::post("/v1/recarga")
                .header("authorization", format!("Bearer {}", c.api_key))
                .header("content-type", "text/plain")
                .body(Body::from("valor=500"))
                .unwrap(),
        )
        .await;
    r.error(400, "VALOR_INVALIDO");
}
