//! A NUL byte from the wire (PostgreSQL text cannot hold one) gets the same answer on both
//! stores: no 500, and a lookup containing one is in the history.

use serde_json::{Value, json};

use crate::server::{Server, databases};

/// What one store answered, to compare the stores.
async fn responses(s: &Server) -> Vec<Value> {
    let c = s.conta(10).await;
    let mut v = Vec::new();
    for path in [
        "/v1/historico?busca=%00",
        "/v1/car/DF-5300108-AB%00CD",
        "/v1/car/%00/completo",
        "/v1/proprietario/529%0098224725",
        "/v1/historico?busca=%00",
        "/v1/historico?busca=AB%00C",
        "/v1/historico",
    ] {
        let (st, body) = s.get(&c.api_key, path).await;
        assert_ne!(st, 500, "{} {path}: {body}", s.name);
        let itens: Vec<Value> = body["itens"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|i| json!([i["endpoint"], i["chaveConsulta"], i["statusHttp"]]))
                    .collect()
            })
            .unwrap_or_default();
        v.push(
            json!({"path": path, "status": st, "total": body["total"], "itens": itens,
            "error": body["error"]}),
        );
    }
    let secret = s.secret().await;
    let body = br#"{"paymentId":"PIX\u0000ABC","status":"pago"}"#.to_vec();
    let (st, body) = s.raw_webhook(&secret, body).await;
    v.push(json!({"webhook": st, "error": body["error"]}));
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_bytes_get_the_same_answer_on_both_stores() {
    let mut per_backend = Vec::new();
    for database in databases("nul_bytes_get_the_same_answer_on_both_stores").await {
        let s = Server::new(&database).await;
        let r = responses(&s).await;
        // the three lookups are recorded, keys included (a search for a NUL finds nothing:
        // no stored key holds one, both stores keep U+FFFD in its place)
        let historico = &r[6];
        assert_eq!(historico["total"], 3, "{}: {historico}", s.name);
        let keys = historico["itens"].to_string();
        assert!(
            keys.contains('\u{FFFD}') && !keys.contains("\\u0000"),
            "{}: {keys}",
            s.name
        );
        assert_eq!(r[7]["webhook"], 404, "{}: {}", s.name, r[7]);
        per_backend.push((s.name, r));
    }
    if let [(_, sqlite), (_, pg)] = &per_backend[..] {
        assert_eq!(sqlite, pg, "SQLite and PostgreSQL answer alike");
    }
}
