use carapi_sdk::{NovaRecarga, sandbox};
use carapi_service::NovaConta;
use rust_decimal::Decimal;

use crate::helpers::*;

#[tokio::test]
async fn basic_lookup_charges_once_and_matches_the_contract_shapes() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let r = app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await;
    let v = r.ok();
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(v["success"], true);
    assert!(
        v.get("sandbox").is_none(),
        "sandbox only for reserved values"
    );
    assert_eq!(v["cache"], false, "first lookup of the record");
    let d = &v["dados"];
    assert_eq!(d["codigoCar"], CODIGO);
    assert_eq!(d["uf"], "Distrito Federal");
    assert!(
        d.get("proprietariosNomes").is_none(),
        "basic data has no owners"
    );
    let area = d["areaTotalHa"].as_str().unwrap();
    let (int, frac) = area.split_once(',').unwrap();
    assert!(
        int.bytes().all(|b| b.is_ascii_digit()) && frac.len() == 4,
        "{area}"
    );
    let data = d["dataCadastro"].as_str().unwrap();
    assert!(
        chrono::NaiveDateTime::parse_from_str(data, "%d/%m/%Y %H:%M:%S").is_ok(),
        "{data}"
    );
    // A bundled CSV record has no known position: null, never its municipal seat.
    assert!(d["latitude"].is_null() && d["longitude"].is_null(), "{d}");
    assert!(chrono::DateTime::parse_from_rfc3339(v["dataConsulta"].as_str().unwrap()).is_ok());
    // typed decode with the SDK's own model
    let typed: carapi_sdk::CarResponse<carapi_sdk::CarDadosBasicos> =
        serde_json::from_slice(&r.body).unwrap();
    assert_eq!(typed.dados.codigo_car, CODIGO);

    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 9.0);
    assert_eq!(s["usoHoje"]["requisicoes"], 1);
    assert_eq!(s["usoHoje"]["gasto"], 1.0);
    assert_eq!(s["usoMes"]["gasto"], 1.0);
    let h = app.historico(&c.api_key, "").await;
    let item = &h["itens"][0];
    assert_eq!(item["endpoint"], "/v1/car/{codigo}");
    assert_eq!(item["chaveConsulta"], CODIGO);
    assert_eq!(item["statusHttp"], 200);
    assert_eq!(item["cobrado"], true);
    assert_eq!(item["valorCobrado"], 1.0);
    assert_eq!(item["saldoAntes"], 10.0);
    assert_eq!(item["saldoDepois"], 9.0);
}

#[tokio::test]
async fn complete_lookup_has_owners_and_cache_is_true_after_anyone_consolidated_it() {
    let app = App::new().await;
    let a = app.conta_com(10).await;
    let b = app.conta_com(10).await;
    let v = app
        .get(&a.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await
        .ok();
    assert_eq!(v["cache"], false);
    let d = &v["dados"];
    assert!(
        d["proprietariosNomes"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let docs = d["proprietariosCpfs"].as_str().unwrap();
    for doc in docs.split(", ") {
        carapi_sdk::CpfCnpj::parse(doc).unwrap();
        assert!(doc.contains('.') && doc.contains('-'), "formatted: {doc}");
    }
    // another account, another endpoint: the record is now consolidated, still charged
    let v = app.get(&b.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    assert_eq!(v["cache"], true);
    assert_eq!(app.saldo(&a.api_key).await["saldoReais"], 7.7);
    assert_eq!(app.saldo(&b.api_key).await["saldoReais"], 9.0);
}

#[tokio::test]
async fn codes_are_normalised_before_validation() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let dotted = "df-5300108-b69b.317d.d02c.43da.a77a.0784.aeef.7d47";
    let v = app.get(&c.api_key, &format!("/v1/car/{dotted}")).await.ok();
    assert_eq!(v["dados"]["codigoCar"], CODIGO);
    let v = app
        .get(
            &c.api_key,
            "/v1/car/DF-5300108-B69B.317D.D02C.43DA.A77A.0784.AEEF.7D47%20",
        )
        .await
        .ok();
    assert_eq!(v["dados"]["codigoCar"], CODIGO);
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(
        h["itens"][0]["chaveConsulta"], CODIGO,
        "history keeps the normalised key"
    );
}

#[tokio::test]
async fn invalid_and_unknown_codes_are_recorded_and_never_charged() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    for bad in [
        "DF-5300108-XYZ",
        "MT-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
        "abc",
        "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D4",
    ] {
        for suffix in ["", "/completo", "/recibo"] {
            let r = app.get(&c.api_key, &format!("/v1/car/{bad}{suffix}")).await;
            r.error(400, "CODIGO_CAR_INVALIDO");
        }
    }
    for suffix in ["", "/completo", "/recibo"] {
        let r = app
            .get(&c.api_key, &format!("/v1/car/{MISSING_CODIGO}{suffix}"))
            .await;
        r.error(404, "CAR_NAO_ENCONTRADO");
    }
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 10.0);
    assert_eq!(s["usoHoje"]["requisicoes"], 15);
    assert_eq!(s["usoHoje"]["erros"], 15);
    assert_eq!(s["usoHoje"]["gasto"], 0.0);
    let h = app.historico(&c.api_key, "?size=100").await;
    assert_eq!(h["total"], 15);
    for item in h["itens"].as_array().unwrap() {
        assert_eq!(item["cobrado"], false);
        assert_eq!(item["valorCobrado"], 0.0);
    }
    assert_eq!(
        h["itens"][14]["chaveConsulta"], "DF-5300108-XYZ",
        "raw key when it does not parse"
    );
}

#[tokio::test]
async fn sandbox_codes_answer_fixed_data_without_debit_limit_or_history() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    app.put(
        &c.api_key,
        "/v1/limites",
        r#"{"limiteDiarioRequisicoes":1}"#,
    )
    .await
    .ok();
    for _ in 0..3 {
        for suffix in ["", "/completo"] {
            let v = app
                .get(
                    &c.api_key,
                    &format!("/v1/car/{}{suffix}", sandbox::CAR_BASICO),
                )
                .await
                .ok();
            assert_eq!(v["sandbox"], true);
            assert_eq!(v["dados"]["codigoCar"], sandbox::CAR_BASICO);
        }
        let r = app
            .get(&c.api_key, &format!("/v1/car/{}", sandbox::CAR_NAO_EXISTE))
            .await;
        assert_eq!(r.error(404, "CAR_NAO_ENCONTRADO")["sandbox"], true);
        let r = app
            .get(
                &c.api_key,
                &format!("/v1/car/{}/completo", sandbox::CAR_SEM_SALDO),
            )
            .await;
        assert_eq!(r.error(402, "SALDO_INSUFICIENTE")["sandbox"], true);
    }
    // lower case is normalised to the reserved value too
    let v = app
        .get(
            &c.api_key,
            &format!("/v1/car/{}", sandbox::CAR_BASICO.to_lowercase()),
        )
        .await
        .ok();
    assert_eq!(v["sandbox"], true);
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 0.0);
    assert_eq!(s["usoHoje"]["requisicoes"], 0);
    assert_eq!(app.historico(&c.api_key, "").await["total"], 0);
}

#[tokio::test]
async fn insufficient_balance_is_402_with_no_debit_and_recorded() {
    let app = App::new().await;
    let c = app
        .conta(NovaConta {
            saldo: Decimal::new(229, 2),
            ..NovaConta::default()
        })
        .await;
    let r = app
        .get(&c.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await;
    r.error(402, "SALDO_INSUFICIENTE");
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 2.29);
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["itens"][0]["statusHttp"], 402);
    assert_eq!(h["itens"][0]["cobrado"], false);
    // the basic lookup still fits
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 1.29);
}

#[tokio::test]
async fn legacy_accounts_pay_legacy_prices_until_their_first_confirmed_top_up() {
    let app = App::new().await;
    let c = app
        .conta(NovaConta {
            saldo: Decimal::from(20),
            legado: true,
            ..NovaConta::default()
        })
        .await;
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["precos"]["carBasico"], 0.5);
    assert_eq!(s["precos"]["recibo"], 10.0);
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await
        .ok();
    app.get(&c.api_key, "/v1/proprietario/385.211.390-39")
        .await
        .ok();
    assert_eq!(
        app.saldo(&c.api_key).await["saldoReais"],
        20.0 - 0.5 - 1.5 - 1.5
    );
    // a top-up created but not paid changes nothing
    let body = serde_json::to_string(&NovaRecarga {
        valor: Decimal::from(500),
        confirmar_novos_precos: true,
    })
    .unwrap();
    let created = app.post(&c.api_key, "/v1/recarga", &body).await.ok();
    assert_eq!(app.saldo(&c.api_key).await["precos"]["carBasico"], 0.5);
    // confirmed: current table from then on
    let payment = created["paymentId"].as_str().unwrap();
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(payment, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(
        carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
            .await
            .unwrap(),
        1
    );
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["precos"]["carBasico"], 1.0);
    assert_eq!(s["saldoReais"], 516.5);
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 515.5);
}

#[tokio::test]
async fn daily_request_limit_gives_429_and_counts_only_charged_lookups() {
    let app = App::new().await;
    let c = app.conta_com(100).await;
    let v = app
        .put(
            &c.api_key,
            "/v1/limites",
            r#"{"limiteDiarioRequisicoes":2}"#,
        )
        .await
        .ok();
    assert_eq!(v["limiteDiarioRequisicoes"], 2);
    app.get(&c.api_key, &format!("/v1/car/{MISSING_CODIGO}"))
        .await
        .error(404, "CAR_NAO_ENCONTRADO");
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    let r = app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await;
    r.error(429, "LIMITE_EXCEDIDO");
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry));
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 98.0);
    // free endpoints are not affected
    app.get(&c.api_key, "/v1/uso").await.ok();
    // the next Brasília day starts afresh
    app.advance(86_400);
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    // removing the limit (0 = none)
    app.put(
        &c.api_key,
        "/v1/limites",
        r#"{"limiteDiarioRequisicoes":0}"#,
    )
    .await
    .ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok();
}

#[tokio::test]
async fn monthly_spending_limit_refuses_a_charge_that_would_pass_it() {
    let app = App::new().await;
    let c = app.conta_com(100).await;
    app.put(&c.api_key, "/v1/limites", r#"{"limiteMensalReais":3.3}"#)
        .await
        .ok();
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}/completo"))
        .await
        .ok(); // 2.30
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await.ok(); // 1.00 -> 3.30
    app.get(&c.api_key, &format!("/v1/car/{CODIGO}"))
        .await
        .error(429, "LIMITE_EXCEDIDO");
    let s = app.saldo(&c.api_key).await;
    assert_eq!(s["saldoReais"], 96.7);
    assert_eq!(s["limiteMensalReais"], 3.3);
    assert_eq!(s["usoMes"]["gasto"], 3.3);
    let h = app.historico(&c.api_key, "?status=erro").await;
    assert_eq!(h["itens"][0]["statusHttp"], 429);
}

#[tokio::test]
async fn each_charged_route_is_recorded_as_its_own_endpoint() {
    let app = App::new().await;
    let c = app.conta_com(100).await;
    let documento = carapi_service::dados::example_documento();
    for e in carapi_sdk::EndpointConsulta::ALL {
        let chave = if e.takes_codigo_car() {
            CODIGO.to_owned()
        } else {
            documento.to_string()
        };
        let path = e
            .route()
            .replace("{codigoCar}", &chave)
            .replace("{cpfCnpj}", &chave);
        let r = app.get(&c.api_key, &path).await;
        assert_eq!(r.status, 200, "{path}");
    }
    let h = app.historico(&c.api_key, "").await;
    let mut recorded: Vec<String> = h["itens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["endpoint"].as_str().unwrap().to_owned())
        .collect();
    recorded.sort();
    let mut expected: Vec<String> = carapi_sdk::EndpointConsulta::ALL
        .iter()
        .map(|e| e.as_str().to_owned())
        .collect();
    expected.sort();
    assert_eq!(
        recorded, expected,
        "one history row per route, under its endpoint"
    );
}
