//! `historico_stream` and `recargas_stream` walk every page.

use carapi_sdk::{HistoricoParams, RecargaStatus, RecargasParams, StatusConsulta};
use futures::StreamExt;
use serde_json::json;
use wiremock::MockServer;
use wiremock::matchers::query_param;

use crate::common::*;

fn historico_page(page: u32, total_paginas: u32, per_page: u32, size: u32) -> serde_json::Value {
    let itens: Vec<_> = (0..per_page)
        .map(|i| consumo_item((page - 1) * 100 + i))
        .collect();
    json!({"success": true, "page": page, "size": size, "total": 250, "totalPaginas": total_paginas, "itens": itens})
}

#[tokio::test]
async fn historico_stream_walks_every_page_with_size_100() {
    let server = MockServer::start().await;
    for (page, n) in [(1, 100), (2, 100), (3, 50)] {
        get("/v1/historico")
            .and(query_param("page", page.to_string().as_str()))
            .and(query_param("size", "100"))
            .and(query_param("status", "sucesso"))
            .respond_with(ok(historico_page(page, 3, n, 100)))
            .expect(1)
            .mount(&server)
            .await;
    }
    let c = client(&server);
    let params = HistoricoParams {
        status: Some(StatusConsulta::Sucesso),
        ..Default::default()
    };
    let itens: Vec<_> = c.historico_stream(params).try_collect().await.unwrap();
    assert_eq!(itens.len(), 250);
    assert_eq!(itens[0].chave_consulta.as_deref(), Some("item-0"));
    assert_eq!(itens[249].chave_consulta.as_deref(), Some("item-249"));
}

#[tokio::test]
async fn historico_stream_is_static_and_lazy() {
    let server = MockServer::start().await;
    get("/v1/historico")
        .and(query_param("page", "2"))
        .respond_with(ok(historico_page(2, 5, 2, 2)))
        .expect(1)
        .mount(&server)
        .await;
    let stream = {
        let c = client(&server);
        c.historico_stream(HistoricoParams {
            page: Some(2),
            size: Some(2),
            ..Default::default()
        })
    }; // the client is dropped: the stream owns a clone
    let handle = tokio::spawn(async move { stream.take(2).collect::<Vec<_>>().await });
    let got = handle.await.unwrap();
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(Result::is_ok));
}

#[tokio::test]
async fn recargas_stream_walks_pages_and_stops_on_error() {
    let server = MockServer::start().await;
    get("/v1/recargas")
        .and(query_param("page", "1"))
        .and(query_param("size", "2"))
        .and(query_param("status", "Pendente"))
        .respond_with(ok(
            json!({"success": true, "page": 1, "size": 2, "total": 5, "totalPaginas": 3,
                                "itens": [recarga_item(1), recarga_item(2)]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    get("/v1/recargas")
        .and(query_param("page", "2"))
        .respond_with(ok(
            json!({"success": true, "page": 2, "size": 2, "total": 5, "totalPaginas": 3,
                                "itens": [recarga_item(3), recarga_item(4)]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    get("/v1/recargas")
        .and(query_param("page", "3"))
        .respond_with(api_error(500, "ERRO_INTERNO", "x"))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let params = RecargasParams {
        page: None,
        size: Some(2),
        status: Some(RecargaStatus::Pendente),
    };
    let got: Vec<_> = c.recargas_stream(params).collect().await;
    assert_eq!(got.len(), 5, "4 items then the error, then the end");
    assert!(got[..4].iter().all(Result::is_ok));
    assert_eq!(got[4].as_ref().unwrap_err().status(), Some(500));
}
