//! Input at the edges of the contract: what the server answers to a request outside what any
//! client should send, on both stores, never a 500.

use crate::server::{Servidor, bancos};

/// A `busca` longer than any stored key (the history keeps 64 characters of a key) and than
/// any endpoint matches nothing: an empty page, never a 500 from a pattern the database finds
/// too complex (docs/contrato.md, "GET /v1/historico": `busca` is a substring of
/// `chaveConsulta` or `endpoint`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_busca_is_an_empty_page() {
    for database in bancos("a_long_busca_is_an_empty_page").await {
        let s = Servidor::new(&database).await;
        let c = s.conta(10).await;
        let chave = format!("DF-5300108-{}", "A".repeat(60));
        let (st, _) = s.get(&c.api_key, &format!("/v1/car/{chave}")).await;
        assert_eq!(st, 400, "{}", s.nome);
        // the stored key is the first 64 characters: a 64-character busca finds it
        let guardada: String = chave.chars().take(64).collect();
        let (st, v) = s
            .get(&c.api_key, &format!("/v1/historico?busca={guardada}"))
            .await;
        assert_eq!((st, v["total"].as_u64()), (200, Some(1)), "{}: {v}", s.nome);
        for n in [65, 60_000] {
            let busca = "A".repeat(n);
            let (st, v) = s
                .get(&c.api_key, &format!("/v1/historico?busca={busca}"))
                .await;
            assert_eq!(st, 200, "{} busca of {n}: {v}", s.nome);
            assert_eq!(v["total"], 0, "{}: {v}", s.nome);
            assert_eq!(v["itens"].as_array().map(Vec::len), Some(0), "{}", s.nome);
        }
    }
}
