use crate::helpers::*;

#[tokio::test]
async fn saldo_is_free_and_not_recorded() {
    let app = App::new().await;
    let c = app.conta_com(5).await;
    for _ in 0..3 {
        let v = app.saldo(&c.api_key).await;
        assert_eq!(v["success"], true);
        assert_eq!(v["saldoReais"], 5.0);
        assert!(v["limiteDiarioRequisicoes"].is_null());
        assert!(v["limiteMensalReais"].is_null());
        assert_eq!(v["precos"]["carCompleto"], 2.3);
        assert_eq!(v["usoHoje"]["requisicoes"], 0);
        assert_eq!(v["usoMes"]["requisicoes"], 0);
    }
    assert_eq!(app.historico(&c.api_key, "").await["total"], 0);
    let typed: carapi_sdk::SaldoResponse =
        serde_json::from_slice(&app.get(&c.api_key, "/v1/saldo").await.body).unwrap();
    assert_eq!(typed.saldo_reais, rust_decimal::Decimal::from(5));
}

#[tokio::test]
async fn history_newest_first_with_filters_and_pagination() {
    let app = App::new().await;
    let c = app.conta_com(100).await;
    let another = app.conta_com(100).await;
    app.get(&another.api_key, &format!("/v1/car/{CODIGO}"))
        .await
        .ok();
    for _ in 0..3 {
        app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    }
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await
        .ok();
    app.get(&c.api_key, "/v1/proprietario/385.211.390-39")
        .await
        .ok();
    app.get(&c.api_key, &format!("/v1/car/{MISSING_CODIGO}"))
        .await
        .error(404, "CAR_NAO_ENCONTRADO");
    app.get(&c.api_key, "/v1/car/lixo")
        .await
        .error(400, "CODIGO_CAR_INVALIDO");

    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["total"], 7, "only this account's lookups");
    assert_eq!(h["page"], 1);
    assert_eq!(h["size"], 20);
    assert_eq!(h["totalPaginas"], 1);
    let itens = h["itens"].as_array().unwrap();
    assert_eq!(itens[0]["chaveConsulta"], "lixo", "newest first");
    assert_eq!(itens[6]["endpoint"], "/v1/car/{codigo}");
    let dates: Vec<&str> = itens.iter().map(|i| i["data"].as_str().unwrap()).collect();
    for w in dates.windows(2) {
        let (a, b) = (
            chrono::DateTime::parse_from_rfc3339(w[0]).unwrap(),
            chrono::DateTime::parse_from_rfc3339(w[1]).unwrap(),
        );
        assert!(a >= b);
    }
    let typed: carapi_sdk::HistoricoResponse =
        serde_json::from_slice(&app.get(&c.api_key, "/v1/historico").await.body).unwrap();
    assert_eq!(typed.itens.len(), 7);

    assert_eq!(
        app.historico(&c.api_key, "?status=sucesso").await["total"],
        5
    );
    assert_eq!(app.historico(&c.api_key, "?status=erro").await["total"], 2);
    let e = "%2Fv1%2Fcar%2F%7Bcodigo%7D";
    assert_eq!(
        app.historico(&c.api_key, &format!("?endpoint={e}")).await["total"],
        5
    );
    assert_eq!(
        app.historico(&c.api_key, &format!("?endpoint={e}&status=erro"))
            .await["total"],
        2
    );
    assert_eq!(
        app.historico(&c.api_key, &format!("?endpoint={e}%2Fcompleto"))
            .await["total"],
        1
    );
    // busca: substring of the key or of the endpoint, case-insensitive
    assert_eq!(
        app.historico(&c.api_key, "?busca=b69b317d").await["total"],
        4
    );
    assert_eq!(
        app.historico(&c.api_key, "?busca=proprietario").await["total"],
        1
    );
    assert_eq!(
        app.historico(&c.api_key, "?busca=38521139039").await["total"],
        1
    );
    assert_eq!(
        app.historico(&c.api_key, "?busca=nada-disso").await["total"],
        0
    );

    let p = app.historico(&c.api_key, "?page=2&size=3").await;
    assert_eq!(p["page"], 2);
    assert_eq!(p["size"], 3);
    assert_eq!(p["totalPaginas"], 3);
    assert_eq!(p["itens"].as_array().unwrap().len(), 3);
    assert_eq!(p["itens"][0], itens[3]);
    let p = app.historico(&c.api_key, "?page=3&size=3").await;
    assert_eq!(p["itens"].as_array().unwrap().len(), 1);
    let p = app.historico(&c.api_key, "?page=9").await;
    assert_eq!(p["itens"].as_array().unwrap().len(), 0);
    assert_eq!(p["total"], 7);
    // size above 100 is reduced to 100
    assert_eq!(app.historico(&c.api_key, "?size=1000").await["size"], 100);
    // page below 1, size below 1, bad filters: ApiError JSON
    for q in [
        "?page=0",
        "?size=0",
        "?page=-1",
        "?page=abc",
        "?status=talvez",
        "?endpoint=%2Fv1%2Fsaldo",
    ] {
        let r = app.get(&c.api_key, &format!("/v1/historico{q}")).await;
        r.error(400, "PARAMETRO_INVALIDO");
    }
}

#[tokio::test]
async fn limits_merge_patch() {
    let app = App::new().await;
    let c = app.conta_com(1).await;
    let v = app.get(&c.api_key, "/v1/limites").await.ok();
    assert!(v["limiteDiarioRequisicoes"].is_null() && v["limiteMensalReais"].is_null());
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()));

    let v = app
        .put(
            &c.api_key,
            "/v1/limites",
            r#"{"limiteDiarioRequisicoes":50,"limiteMensalReais":250.5}"#,
        )
        .await
        .ok();
    assert_eq!(v["limiteDiarioRequisicoes"], 50);
    assert_eq!(v["limiteMensalReais"], 250.5);
    // omitted field keeps its value
    let v = app
        .put(&c.api_key, "/v1/limites", r#"{"limiteMensalReais":100}"#)
        .await
        .ok();
    assert_eq!(v["limiteDiarioRequisicoes"], 50);
    assert_eq!(v["limiteMensalReais"], 100.0);
    // null removes
    let v = app
        .put(
            &c.api_key,
            "/v1/limites",
            r#"{"limiteDiarioRequisicoes":null}"#,
        )
        .await
        .ok();
    assert!(v["limiteDiarioRequisicoes"].is_null());
    assert_eq!(v["limiteMensalReais"], 100.0);
    // 0 removes
    let v = app
        .put(&c.api_key, "/v1/limites", r#"{"limiteMensalReais":0}"#)
        .await
        .ok();
    assert!(v["limiteMensalReais"].is_null());
    // bounds are inclusive
    let v = app
        .put(
            &c.api_key,
            "/v1/limites",
            r#"{"limiteDiarioRequisicoes":100000,"limiteMensalReais":1000000}"#,
        )
        .await
        .ok();
    assert_eq!(v["limiteDiarioRequisicoes"], 100000);
    assert_eq!(v["limiteMensalReais"], 1000000.0);
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["limiteDiarioRequisicoes"], 100000);
    assert_eq!(
        app.get(&c.api_key, "/v1/limites").await.ok()["limiteMensalReais"],
        1000000.0
    );

    for bad in [
        r#"{"limiteDiarioRequisicoes":100001}"#,
        r#"{"limiteDiarioRequisicoes":-1}"#,
        r#"{"limiteDiarioRequisicoes":1.5}"#,
        r#"{"limiteDiarioRequisicoes":"10"}"#,
        r#"{"limiteMensalReais":1000000.01}"#,
        r#"{"limiteMensalReais":-5}"#,
        r#"{"limiteMensalReais":1.001}"#,
        r#"{"limiteMensalReais":10,"limiteDiarioRequisicoes":999999}"#,
        r#"{}"#,
        r#"{"outro":1}"#,
        r#"[]"#,
        r#"{"limiteDiarioRequisicoes":"#,
        "",
    ] {
        app.put(&c.api_key, "/v1/limites", bad)
            .await
            .error(400, "LIMITE_INVALIDO");
    }
    // nothing changed by the refused requests
    let v = app.get(&c.api_key, "/v1/limites").await.ok();
    assert_eq!(v["limiteDiarioRequisicoes"], 100000);
    assert_eq!(v["limiteMensalReais"], 1000000.0);
}

#[tokio::test]
async fn usage_aggregates_last_30_days_per_endpoint() {
    let app = App::new().await;
    let c = app.conta_com(100).await;
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.advance(20 * 86_400);
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.get(&c.api_key, &format!("/v1/car/{MISSING_CODIGO}"))
        .await
        .error(404, "CAR_NAO_ENCONTRADO");
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await
        .ok();
    let v = app.get(&c.api_key, "/v1/uso").await.ok();
    assert_eq!(v["periodoDias"], 30);
    let itens = v["itens"].as_array().unwrap();
    let basico = itens
        .iter()
        .find(|i| i["endpoint"] == "/v1/car/{codigo}")
        .unwrap();
    assert_eq!(basico["quantidade"], 4);
    assert_eq!(basico["valorTotal"], 3.0);
    // 15 days later the first lookup falls out of the window
    app.advance(15 * 86_400);
    let v = app.get(&c.api_key, "/v1/uso").await.ok();
    let itens = v["itens"].as_array().unwrap();
    let basico = itens
        .iter()
        .find(|i| i["endpoint"] == "/v1/car/{codigo}")
        .unwrap();
    assert_eq!(basico["quantidade"], 3);
    assert_eq!(basico["valorTotal"], 2.0);
    let completo = itens
        .iter()
        .find(|i| i["endpoint"] == "/v1/car/{codigo}/completo")
        .unwrap();
    assert_eq!(completo["quantidade"], 1);
    assert_eq!(completo["valorTotal"], 2.3);
    let typed: carapi_sdk::UsoResponse =
        serde_json::from_slice(&app.get(&c.api_key, "/v1/uso").await.body).unwrap();
    assert_eq!(typed.itens.len(), 2);
}
