//! The committed OpenAPI documents (`carapi-service/openapi.json`, the test double's
//! `carapi-test-double/openapi.json`) must equal what the code generates; a normal server serves
//! the service's, a test-mode server both merged.

/// Compares (or, with `CARAPI_UPDATE_OPENAPI` set, rewrites) the committed file `relativo`.
fn matches_expected(relative: &str, generated: &str) {
    let path = format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("CARAPI_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).expect("the committed document exists");
    assert!(
        committed == generated,
        "{relative} is out of date: run `CARAPI_UPDATE_OPENAPI=1 cargo test -p carapi-server openapi` and commit it"
    );
}

#[test]
fn committed_openapi_matches_the_code() {
    matches_expected(
        "carapi-service/openapi.json",
        &carapi_service::openapi::json(),
    );
    matches_expected(
        "carapi-test-double/openapi.json",
        &carapi_test_double::openapi::json(),
    );
}

#[tokio::test]
async fn a_test_mode_server_serves_its_routes_merged_and_a_normal_one_does_not() {
    let normal = crate::helpers::App::new().await;
    let r = normal
        .req(axum::http::Method::GET, None, "/openapi.json", None)
        .await;
    let paths = r.json()["paths"].as_object().unwrap().clone();
    assert!(!paths.keys().any(|p| p.starts_with("/_teste")), "{paths:?}");

    let srv = carapi_test_double::TestServer::start().await.unwrap();
    let v: serde_json::Value = reqwest::get(format!("{}/openapi.json", srv.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for p in [
        "/v1/car/{codigoCar}",
        "/_teste/falhas",
        "/_teste/relogio/avancar",
    ] {
        assert!(v["paths"].get(p).is_some(), "{p} missing in test mode");
    }
    assert!(v["components"]["securitySchemes"]["tokenTeste"].is_object());
    assert!(v["components"]["securitySchemes"]["bearer"].is_object());
    assert!(v["components"]["schemas"]["RegraFalha"].is_object());
    assert!(v["components"]["schemas"]["SaldoResponse"].is_object());
    assert!(
        v["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "teste")
    );
}

#[tokio::test]
async fn served_document_is_the_generated_one_and_covers_every_route() {
    let app = crate::helpers::App::new().await;
    let r = app
        .req(axum::http::Method::GET, None, "/openapi.json", None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        String::from_utf8(r.body.to_vec()).unwrap(),
        carapi_service::openapi::json()
    );
    let v = r.json();
    assert!(v["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = v["paths"].as_object().unwrap();
    for p in [
        "/v1/car/{codigoCar}",
        "/v1/car/{codigoCar}/completo",
        "/v1/car/{codigoCar}/recibo",
        "/v1/proprietario/{cpfCnpj}",
        "/v1/saldo",
        "/v1/historico",
        "/v1/limites",
        "/v1/uso",
        "/v1/recarga/faixas",
        "/v1/recarga",
        "/v1/recarga/{recargaId}",
        "/v1/recargas",
        "/webhooks/pix",
    ] {
        assert!(paths.contains_key(p), "{p} missing");
    }
    let schemas = v["components"]["schemas"].as_object().unwrap();
    for s in [
        "ApiError",
        "SaldoResponse",
        "RecargaCriadaResponse",
        "LimitesUpdate",
        "ProprietarioResponse",
    ] {
        assert!(
            schemas.contains_key(s),
            "schema {s} missing: {:?}",
            schemas.keys().collect::<Vec<_>>()
        );
    }
}
