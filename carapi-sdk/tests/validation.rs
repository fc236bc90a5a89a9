//! Local validation with the docs/dominio.md vectors: bad input never reaches the server.

use carapi_sdk::{Error, sandbox};
use serde_json::json;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer};

use crate::common::*;

const INVALID_CPF_CNPJ: &[&str] = &[
    "529.982.247-24",
    "123.456.789-00",
    "1234567890",
    "222.222.222-22",
    "11.222.333/0001-82",
    "12.ABC.345/01DE-36",
    "12ABC34501DE99",
    "12ABC34501DEAB",
    "12.AB@.345/01DE-35",
    "99.999.999/9999-99",
    "",
];

const VALID_CPF_CNPJ: &[(&str, &str)] = &[
    ("385.211.390-39", "38521139039"),
    ("38521139039", "38521139039"),
    ("529.982.247-25", "52998224725"),
    ("111.444.777-35", "11144477735"),
    ("123.456.789-09", "12345678909"),
    ("000.000.001-91", "00000000191"),
    ("11.222.333/0001-81", "11222333000181"),
    ("11222333000181", "11222333000181"),
    ("00.000.000/0001-91", "00000000000191"),
    ("12.ABC.345/01DE-35", "12ABC34501DE35"),
    ("12ABC34501DE35", "12ABC34501DE35"),
    ("SY.99M.4WL/0001-22", "SY99M4WL000122"),
    ("SY.99M.4WL/1G7A-66", "SY99M4WL1G7A66"),
    ("4B.7BJ.E7D/0001-45", "4B7BJE7D000145"),
];

const INVALID_CODIGOS: &[&str] = &[
    "",
    "DF-5300108-CCD63AE5A8A04271941A8A4CD882967",
    "DF-5300108-CCD63AE5A8A04271941A8A4CD88296720",
    "DF-5300108-GCD63AE5A8A04271941A8A4CD8829672",
    "XX-5300108-CCD63AE5A8A04271941A8A4CD8829672",
    "MT-5300108-CCD63AE5A8A04271941A8A4CD8829672",
    "DF5300108CCD63AE5A8A04271941A8A4CD8829672",
    "DF-5300108-CCD6/3AE5A8A04271941A8A4CD8829672",
    "../saldo",
];

#[tokio::test]
async fn invalid_documents_and_codes_never_reach_the_server() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ok(json!({})))
        .expect(0)
        .mount(&server)
        .await;
    let c = client(&server);
    for d in INVALID_CPF_CNPJ {
        match c.proprietario(d).await {
            Err(Error::Validation(e)) => assert!(e.to_string().contains("CPF/CNPJ"), "{e}"),
            other => panic!("{d:?}: {other:?}"),
        }
    }
    for code in INVALID_CODIGOS {
        for r in [
            c.car(code).await.map(drop),
            c.car_completo(code).await.map(drop),
            c.recibo(code).await.map(drop),
            c.recibo_download(code).await.map(drop),
        ] {
            assert!(matches!(r, Err(Error::Validation(_))), "{code:?}: {r:?}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let e = c
        .recibo_to_file("nada", dir.path().join("x.pdf"))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Validation(_)));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn valid_documents_are_sent_bare() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ok(
            json!({"success": true, "total": 0, "limite": 200, "truncado": false, "itens": []}),
        ))
        .mount(&server)
        .await;
    let c = client(&server);
    for (d, bare) in VALID_CPF_CNPJ {
        c.proprietario(d)
            .await
            .unwrap_or_else(|e| panic!("{d}: {e}"));
        let reqs = server.received_requests().await.unwrap();
        assert_eq!(
            reqs.last().unwrap().url.path(),
            format!("/v1/proprietario/{bare}")
        );
    }
}

#[tokio::test]
async fn sandbox_values_always_pass() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ok(json!({"success": true, "sandbox": true, "total": 0, "limite": 200, "truncado": false, "itens": []})))
        .mount(&server)
        .await;
    let c = client(&server);
    for d in sandbox::DOCUMENTOS {
        c.proprietario(d).await.unwrap();
    }
    // Masked, as the contract allows and the CLI prints them: sent bare.
    c.proprietario("000.000.000-00").await.unwrap();
    for code in sandbox::CODIGOS_CAR {
        // The body is not a CarResponse: only the path matters here.
        let e = c.car(code.to_lowercase()).await.unwrap_err();
        assert!(matches!(e, Error::Decode { .. }), "{e:?}");
    }
    let paths: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_owned())
        .collect();
    assert!(paths.contains(&format!("/v1/car/{}", sandbox::CAR_SEM_SALDO)));
    assert!(paths.contains(&"/v1/proprietario/00000000000000".to_owned()));
    assert_eq!(
        paths
            .iter()
            .filter(|p| *p == "/v1/proprietario/00000000000")
            .count(),
        2,
        "the masked sandbox CPF went bare"
    );
    assert_eq!(paths.len(), 7);
}
