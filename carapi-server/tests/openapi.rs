//! The committed `carapi-service/openapi.json` must equal the document the code generates.

#[test]
fn committed_openapi_matches_the_code() {
    let gerado = carapi_service::openapi::json();
    let caminho = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../carapi-service/openapi.json"
    );
    if std::env::var_os("CARAPI_UPDATE_OPENAPI").is_some() {
        std::fs::write(caminho, &gerado).unwrap();
    }
    let commitado = std::fs::read_to_string(caminho).expect("carapi-service/openapi.json exists");
    assert!(
        commitado == gerado,
        "carapi-service/openapi.json is out of date: run `CARAPI_UPDATE_OPENAPI=1 cargo test -p carapi-server openapi` and commit it"
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
