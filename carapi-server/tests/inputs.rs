//! Input at the edges of the contract: what the server answers to a request outside what any
//! client should send, on both stores, never a 500.

use crate::server::{Server, databases};

/// A `busca` longer than any stored key (the history keeps 64 characters of a key) and than
/// any endpoint matches nothing: an empty page, never a 500 from a pattern the database finds
/// too complex (docs/contrato.md, "GET /v1/historico": `busca` is a substring of
/// `chaveConsulta` or `endpoint`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_busca_is_an_empty_page() {
    for database in databases("a_long_busca_is_an_empty_page").await {
        // A head that holds a 60,000-character query (past the default bound: 431).
        let s = Server::com(&database, |c| c.edge.max_header_bytes = 256 * 1024, |p| p).await;
        let c = s.conta(10).await;
        let chave = format!("DF-5300108-{}", "A".repeat(60));
        let (st, _) = s.get(&c.api_key, &format!("/v1/car/{chave}")).await;
        assert_eq!(st, 400, "{}", s.name);
        // the stored key is the first 64 characters: a 64-character busca finds it
        let kept: String = chave.chars().take(64).collect();
        let (st, v) = s
            .get(&c.api_key, &format!("/v1/historico?busca={kept}"))
            .await;
        assert_eq!((st, v["total"].as_u64()), (200, Some(1)), "{}: {v}", s.name);
        for n in [65, 60_000] {
            let busca = "A".repeat(n);
            let (st, v) = s
                .get(&c.api_key, &format!("/v1/historico?busca={busca}"))
                .await;
            assert_eq!(st, 200, "{} busca of {n}: {v}", s.name);
            assert_eq!(v["total"], 0, "{}: {v}", s.name);
            assert_eq!(v["itens"].as_array().map(Vec::len), Some(0), "{}", s.name);
        }
    }
}

/// `PUT path` with `key` and a raw body: status and JSON body.
async fn put(s: &Server, key: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let r = s
        .http
        .put(format!("{}{path}", s.server.base_url()))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let st = r.status().as_u16();
    (st, r.json().await.unwrap())
}

/// Words of serde's and axum's English messages that must not reach an error body.
const ENGLISH: [&str; 6] = [
    "expected",
    "invalid",
    "unknown",
    "duplicate",
    "line",
    "column",
];

fn portuguese(v: &serde_json::Value) {
    let msg = v["message"].as_str().unwrap_or_default();
    assert!(!msg.is_empty(), "{v}");
    for word in ENGLISH {
        assert!(!msg.contains(word), "English in {msg:?}");
    }
}

/// Small validations (docs/contrato.md, "PUT /v1/limites", "GET /v1/recarga/faixas"): a
/// repeated JSON key is refused (not "the last wins"), a monthly limit with more than 2 decimals
/// is refused however many digits it has, error messages are Portuguese, and the preview of an
/// amount no top-up accepts is `null` in a 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_validations_answer_as_the_contract_says() {
    for database in databases("small_validations_answer_as_the_contract_says").await {
        let s = Server::new(&database).await;
        let c = s.conta(10).await;
        let k = &c.api_key;
        let n = s.name;
        let (st, v) = put(&s, k, "/v1/limites", r#"{"limiteDiarioRequisicoes":5}"#).await;
        assert_eq!(st, 200, "{n}: {v}");
        for body in [
            r#"{"limiteDiarioRequisicoes":7,"limiteDiarioRequisicoes":9}"#,
            r#"{"limiteMensalReais":100.0000000000000000001}"#,
            r#"{"limiteMensalReais":100.001}"#,
            r#"{"limiteDiarioRequisicoes":1.5}"#,
            r#"{"limiteDiarioRequisicoes":-1}"#,
            r#"{"limiteDiarioRequisicoes":5,}"#,
            r#"{"limiteDiarioRequisicoes":5"#,
        ] {
            let (st, v) = put(&s, k, "/v1/limites", body).await;
            assert_eq!(
                (st, v["error"].as_str()),
                (400, Some("LIMITE_INVALIDO")),
                "{n} {body}: {v}"
            );
            portuguese(&v);
        }
        let (_, v) = s.get(k, "/v1/limites").await;
        assert_eq!(v["limiteDiarioRequisicoes"], 5, "{n}: nothing changed: {v}");
        assert!(v["limiteMensalReais"].is_null(), "{n}: {v}");
        let (st, v) = s
            .post(k, "/v1/recarga", r#"{"valor":500,"valor":900}"#)
            .await;
        assert_eq!(
            (st, v["error"].as_str()),
            (400, Some("VALOR_INVALIDO")),
            "{n}: {v}"
        );
        portuguese(&v);
        for path in [
            "/v1/historico?page=abc",
            "/v1/historico?status=AAA",
            "/v1/historico?page=1&page=2",
            "/v1/recargas?size=-1",
        ] {
            let (st, v) = s.get(k, path).await;
            assert_eq!(
                (st, v["error"].as_str()),
                (400, Some("PARAMETRO_INVALIDO")),
                "{n} {path}: {v}"
            );
            portuguese(&v);
        }
        let (st, v) = s.get(k, "/v1/historico?page=1&page=2").await;
        assert!(
            v["message"].as_str().unwrap().contains("'page'"),
            "{n} {st}: {v}"
        );
        for valor in ["5.748219107376194e+16", "1e300", "abc", "NaN"] {
            let (st, v) = s.get(k, &format!("/v1/recarga/faixas?valor={valor}")).await;
            assert_eq!(st, 200, "{n} {valor}: {v}");
            assert!(v["preview"].is_null(), "{n} {valor}: {v}");
        }
        let (_, v) = s.get(k, "/v1/recarga/faixas?valor=1000000").await;
        assert_eq!(v["preview"]["totalCreditado"], 1_100_000.0, "{n}: {v}");
    }
}

/// A test token made only of spaces is refused at start, never silently replaced by a random
/// one (the operator meant to set one).
#[test]
fn a_whitespace_test_token_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let spaces = " ".repeat(40);
    for (args, env) in [
        (
            vec!["--modo-teste", "--token-teste", spaces.as_str()],
            vec![],
        ),
        (
            vec!["--modo-teste"],
            vec![("CARAPI_TOKEN_TESTE", spaces.as_str())],
        ),
    ] {
        let out = crate::server_process::serve_refused(&url, &args, &env);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("só tem espaços"), "{err}");
    }
}
