//! History filters and pagination clamps, and the usage aggregates.

use carapi_sdk::{EndpointConsulta, HistoricoParams, StatusConsulta};
use carapi_tests::Environment;
use rust_decimal_macros::dec;

use crate::{CODIGO_REAL, MISSING_CODIGO};

#[tokio::test]
async fn history_filters_pagination_and_usage() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    let c = env.builder(&conta.api_key).build().unwrap();

    for _ in 0..3 {
        c.car(CODIGO_REAL).await.unwrap();
    }
    c.car_completo(CODIGO_REAL).await.unwrap();
    let _ = c.car(MISSING_CODIGO).await.unwrap_err();

    let q = |p: HistoricoParams| {
        let c = c.clone();
        async move { c.historico(&p).await.unwrap() }
    };
    assert_eq!(q(HistoricoParams::default()).await.total, 5);
    let sucesso = q(HistoricoParams {
        status: Some(StatusConsulta::Sucesso),
        ..Default::default()
    })
    .await;
    assert_eq!(sucesso.total, 4);
    let error = q(HistoricoParams {
        status: Some(StatusConsulta::Erro),
        ..Default::default()
    })
    .await;
    assert_eq!((error.total, error.itens[0].status_http), (1, 404));
    assert_eq!(
        error.itens[0].chave_consulta.as_deref(),
        Some(MISSING_CODIGO)
    );
    let completo = q(HistoricoParams {
        endpoint: Some(EndpointConsulta::CarCompleto),
        ..Default::default()
    })
    .await;
    assert_eq!(completo.total, 1);
    let busca = q(HistoricoParams {
        busca: Some("0000000000".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(busca.total, 1, "busca matches a substring of chaveConsulta");
    let busca = q(HistoricoParams {
        busca: Some("completo".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(busca.total, 1, "busca matches a substring of endpoint");

    let page = q(HistoricoParams {
        page: Some(2),
        size: Some(2),
        ..Default::default()
    })
    .await;
    assert_eq!(
        (
            page.page,
            page.size,
            page.total,
            page.total_paginas,
            page.itens.len()
        ),
        (2, 2, 5, 3, 2)
    );
    let large = q(HistoricoParams {
        size: Some(1000),
        ..Default::default()
    })
    .await;
    assert_eq!(large.size, 100, "size above 100 is reduced to 100");
    let beyond = q(HistoricoParams {
        page: Some(9),
        ..Default::default()
    })
    .await;
    assert!(beyond.itens.is_empty() && beyond.total == 5);

    let uso = c.uso().await.unwrap();
    let basico = uso
        .itens
        .iter()
        .find(|i| i.endpoint == "/v1/car/{codigo}")
        .unwrap();
    assert_eq!(
        (basico.quantidade, basico.valor_total),
        (4, dec!(3.00)),
        "errors count, are not charged"
    );
    let completo = uso
        .itens
        .iter()
        .find(|i| i.endpoint == "/v1/car/{codigo}/completo")
        .unwrap();
    assert_eq!((completo.quantidade, completo.valor_total), (1, dec!(2.30)));

    let saldo = c.saldo().await.unwrap();
    assert_eq!(
        (
            saldo.uso_hoje.requisicoes,
            saldo.uso_hoje.erros,
            saldo.uso_hoje.gasto
        ),
        (5, 1, dec!(5.30))
    );
}

#[tokio::test]
async fn page_zero_is_a_clear_error() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(1)).await;
    let r = reqwest::Client::new()
        .get(format!("{}/v1/historico?page=0", env.server.base_url()))
        .bearer_auth(&conta.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["success"], false);
}
