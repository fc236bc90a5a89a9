use base64::Engine;
use carapi_sdk::domain::pix;
use carapi_service::NovaConta;
use rust_decimal::Decimal;

use crate::helpers::*;

fn decode_qr(png_b64: &str) -> String {
    let png = base64::engine::general_purpose::STANDARD
        .decode(png_b64)
        .unwrap();
    let img = image::load_from_memory(&png).unwrap().to_luma8();
    let mut prep = rqrr::PreparedImage::prepare(img);
    let grids = prep.detect_grids();
    assert_eq!(grids.len(), 1);
    grids[0].decode().unwrap().1
}

#[tokio::test]
async fn tiers_preview_and_legacy_flags() {
    let app = App::new().await;
    let c = app.conta_com(1).await;
    let v = app.get(&c.api_key, "/v1/recarga/faixas").await.ok();
    assert_eq!(v["valorMinimo"], 500.0);
    assert_eq!(v["usaPrecoLegado"], false);
    assert_eq!(v["confirmarNovosPrecosObrigatorio"], false);
    assert!(v["preview"].is_null());
    let faixas = v["faixas"].as_array().unwrap();
    assert_eq!(faixas[0]["valorMinimo"], 500.0);
    assert!(faixas.last().unwrap()["valorMaximo"].is_null());
    let typed: carapi_sdk::FaixasResponse = serde_json::from_slice(
        &app.get(&c.api_key, "/v1/recarga/faixas?valor=2500")
            .await
            .body,
    )
    .unwrap();
    let p = typed.preview.unwrap();
    assert_eq!(p.valor_pago, Decimal::from(2500));
    assert_eq!(p.percentual_bonus, Decimal::from(8));
    assert_eq!(p.valor_bonus, Decimal::from(200));
    assert_eq!(p.total_creditado, Decimal::from(2700));
    for bad in ["abc", "NaN", "inf", "1e99999"] {
        let v = app
            .get(&c.api_key, &format!("/v1/recarga/faixas?valor={bad}"))
            .await
            .ok();
        assert!(v["preview"].is_null(), "{bad}: {v}");
    }
    // Any finite number is inside the schema: a preview, zero bonus below the tiers.
    for (valor, pago) in [("-1", -1.0), ("0", 0.0), ("10.001", 10.0)] {
        let v = app
            .get(&c.api_key, &format!("/v1/recarga/faixas?valor={valor}"))
            .await
            .ok();
        assert_eq!(v["preview"]["valorPago"].as_f64(), Some(pago), "{v}");
        assert_eq!(v["preview"]["valorBonus"].as_f64(), Some(0.0), "{v}");
    }
    let legado = app
        .conta(NovaConta {
            legado: true,
            ..NovaConta::default()
        })
        .await;
    let v = app.get(&legado.api_key, "/v1/recarga/faixas").await.ok();
    assert_eq!(v["usaPrecoLegado"], true);
    assert_eq!(v["confirmarNovosPrecosObrigatorio"], true);
    assert_eq!(v["precosAtuais"]["carBasico"], 0.5);
    assert_eq!(v["precosAposRecarga"]["carBasico"], 1.0);
}

#[tokio::test]
async fn create_returns_a_valid_br_code_and_a_png_that_decodes_to_it() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let r = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 1234.56}"#)
        .await;
    let v = r.ok();
    let typed: carapi_sdk::RecargaCriadaResponse = serde_json::from_slice(&r.body).unwrap();
    assert!(!typed.reaproveitada);
    assert_eq!(typed.status, carapi_sdk::RecargaStatus::Pendente);
    assert_eq!(typed.valor, Decimal::new(123456, 2));
    assert_eq!(typed.preview_bonus.percentual_bonus, Decimal::from(5));
    assert_eq!(
        typed.preview_bonus.valor_bonus,
        Decimal::new(6172, 2),
        "5 % rounded down to the centavo"
    );
    assert_eq!(typed.preview_bonus.total_creditado, Decimal::new(129628, 2));
    assert!(!typed.payment_id.is_empty());
    // BR Code: valid CRC, dynamic, amount of the charge
    let fields = pix::parse(&typed.qr_code).unwrap();
    assert!(fields.iter().any(|f| f.id == "01" && f.valor == "12"));
    assert_eq!(
        pix::valor(&typed.qr_code).unwrap(),
        Some(Decimal::new(123456, 2))
    );
    assert!(
        typed.qr_code.contains(&typed.payment_id),
        "txid is the payment id"
    );
    assert_eq!(decode_qr(&typed.qr_code_base64), typed.qr_code);
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()));
    // nothing credited yet
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 0.0);
}

#[tokio::test]
async fn create_validation_errors() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    for bad in [
        r#"{"valor": "abc"}"#,
        r#"{"valor": -500}"#,
        r#"{"valor": 0}"#,
        r#"{"valor": 500.001}"#,
        r#"{"valor": 100000000}"#,
        r#"{"valor": null}"#,
        r#"{}"#,
        r#"{"valor": 500, "confirmarNovosPrecos": "sim"}"#,
        r#"{"valor": "#,
        "",
        "[1]",
    ] {
        app.post(&c.api_key, "/v1/recarga", bad)
            .await
            .error(400, "VALOR_INVALIDO");
    }
    for low in ["499.99", "1", "0.01"] {
        app.post(&c.api_key, "/v1/recarga", &format!(r#"{{"valor": {low}}}"#))
            .await
            .error(400, "VALOR_MINIMO");
    }
    let legado = app
        .conta(NovaConta {
            legado: true,
            ..NovaConta::default()
        })
        .await;
    app.post(&legado.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .error(400, "CONFIRMACAO_PRECOS_OBRIGATORIA");
    app.post(
        &legado.api_key,
        "/v1/recarga",
        r#"{"valor": 500, "confirmarNovosPrecos": false}"#,
    )
    .await
    .error(400, "CONFIRMACAO_PRECOS_OBRIGATORIA");
    app.post(
        &legado.api_key,
        "/v1/recarga",
        r#"{"valor": 500, "confirmarNovosPrecos": true}"#,
    )
    .await
    .ok();
    let without_doc = app
        .conta(NovaConta {
            documento: None,
            ..NovaConta::default()
        })
        .await;
    app.post(&without_doc.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .error(400, "DOCUMENTO_AUSENTE");
    assert_eq!(app.get(&c.api_key, "/v1/recargas").await.ok()["total"], 0);
}

#[tokio::test]
async fn an_amount_with_more_than_two_decimals_is_refused_however_it_is_written() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    for bad in [
        "500.001",
        "500.0000000000000000001",
        "500.00000000000000000000000000001",
        "5.000001e2",
    ] {
        let v = app
            .post(&c.api_key, "/v1/recarga", &format!(r#"{{"valor": {bad}}}"#))
            .await
            .error(400, "VALOR_INVALIDO");
        assert!(
            v["message"].as_str().unwrap().contains("Valor inválido"),
            "{bad}: {v}"
        );
    }
    app.post(&c.api_key, "/v1/recarga", r#"{"valor": 1e400}"#)
        .await
        .error(400, "VALOR_INVALIDO");
    // Duplicated keys are refused rather than read one way by one decoder and another by the other.
    app.post(&c.api_key, "/v1/recarga", r#"{"valor": 500, "valor": 600}"#)
        .await
        .error(400, "VALOR_INVALIDO");
    assert_eq!(app.get(&c.api_key, "/v1/recargas").await.ok()["total"], 0);
    for good in ["500", "500.10", "500.100", "5e2", "5.5E2"] {
        app.post(
            &c.api_key,
            "/v1/recarga",
            &format!(r#"{{"valor": {good}}}"#),
        )
        .await
        .ok();
    }
}

#[tokio::test]
async fn provider_failure_is_502_erro_pix_and_creates_nothing() {
    let app = App::com(|c| c.pix_failure = true).await;
    let c = app.conta_com(0).await;
    app.post(&c.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .error(502, "ERRO_PIX");
    assert_eq!(app.get(&c.api_key, "/v1/recargas").await.ok()["total"], 0);
}

#[tokio::test]
async fn same_amount_within_10_minutes_is_reused() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let another = app.conta_com(0).await;
    let a = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .ok();
    app.advance(9 * 60);
    let b = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 500.00}"#)
        .await
        .ok();
    assert_eq!(b["reaproveitada"], true);
    assert_eq!(b["recargaId"], a["recargaId"]);
    assert_eq!(b["paymentId"], a["paymentId"]);
    assert_eq!(b["qrCode"], a["qrCode"]);
    // another amount or another account: new charge
    let d = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 600}"#)
        .await
        .ok();
    assert_eq!(d["reaproveitada"], false);
    let e = app
        .post(&another.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .ok();
    assert_eq!(e["reaproveitada"], false);
    // after 10 minutes: new charge
    app.advance(2 * 60);
    let f = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .ok();
    assert_eq!(f["reaproveitada"], false);
    assert_ne!(f["recargaId"], a["recargaId"]);
    // a confirmed one is not reused
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(f["paymentId"].as_str().unwrap(), chrono::Utc::now())
        .await
        .unwrap();
    carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
        .await
        .unwrap();
    let g = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 500}"#)
        .await
        .ok();
    assert_eq!(g["reaproveitada"], false);
    assert_eq!(app.get(&c.api_key, "/v1/recargas").await.ok()["total"], 4);
}

#[tokio::test]
async fn status_and_list_only_read() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let another = app.conta_com(0).await;
    let created = app
        .post(&c.api_key, "/v1/recarga", r#"{"valor": 1000}"#)
        .await
        .ok();
    let id = created["recargaId"].as_str().unwrap();
    let payment = created["paymentId"].as_str().unwrap();
    // the PSP has the payment, but status reads never credit: only webhook/reconciliation do
    app.state
        .psp
        .as_ref()
        .unwrap()
        .pay(payment, chrono::Utc::now())
        .await
        .unwrap();
    for _ in 0..3 {
        let v = app.get(&c.api_key, &format!("/v1/recarga/{id}")).await.ok();
        assert_eq!(v["status"], "Pendente");
        assert_eq!(v["pago"], false);
        assert_eq!(v["saldoAtual"], 10.0);
        assert_eq!(v["qrCode"], created["qrCode"]);
        assert!(v["qrCodeBase64"].as_str().is_some_and(|s| !s.is_empty()));
        assert!(v.get("valorBonus").is_none() && v.get("totalCreditado").is_none());
        let l = app.get(&c.api_key, "/v1/recargas").await.ok();
        assert_eq!(l["itens"][0]["status"], "Pendente");
    }
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 10.0);
    // another account cannot see it; malformed ids are 404 too
    app.get(&another.api_key, &format!("/v1/recarga/{id}"))
        .await
        .error(404, "RECARGA_NAO_ENCONTRADA");
    app.get(
        &c.api_key,
        "/v1/recarga/00000000-0000-0000-0000-000000000000",
    )
    .await
    .error(404, "RECARGA_NAO_ENCONTRADA");
    app.get(&c.api_key, "/v1/recarga/nao-e-uuid")
        .await
        .error(404, "RECARGA_NAO_ENCONTRADA");
    assert_eq!(
        app.get(&another.api_key, "/v1/recargas").await.ok()["total"],
        0
    );

    carapi_service::reconcile::run_once(&app.state.store, &app.state.pix)
        .await
        .unwrap();
    let r = app.get(&c.api_key, &format!("/v1/recarga/{id}")).await;
    let v = r.ok();
    assert_eq!(v["status"], "Confirmado");
    assert_eq!(v["pago"], true);
    assert_eq!(v["valorBonus"], 50.0);
    assert_eq!(v["percentualBonus"], 5.0);
    assert_eq!(v["totalCreditado"], 1050.0);
    assert_eq!(v["saldoAtual"], 1060.0);
    assert!(v.get("qrCode").is_none(), "QR only while pending");
    let typed: carapi_sdk::RecargaStatusResponse = serde_json::from_slice(&r.body).unwrap();
    assert!(typed.pago);
    let l = app
        .get(&c.api_key, "/v1/recargas?status=Confirmado")
        .await
        .ok();
    assert_eq!(l["total"], 1);
    assert_eq!(l["itens"][0]["valorPago"], 1000.0);
    assert_eq!(l["itens"][0]["totalCreditado"], 1050.0);
    assert!(l["itens"][0]["dataConfirmacao"].is_string());
    assert_eq!(
        app.get(&c.api_key, "/v1/recargas?status=Pendente")
            .await
            .ok()["total"],
        0
    );
    app.get(&c.api_key, "/v1/recargas?status=pago")
        .await
        .error(400, "PARAMETRO_INVALIDO");
    app.get(&c.api_key, "/v1/recargas?page=0")
        .await
        .error(400, "PARAMETRO_INVALIDO");
    assert_eq!(
        app.get(&c.api_key, "/v1/recargas?size=101").await.ok()["size"],
        100
    );
}

#[tokio::test]
async fn list_is_newest_first_and_paginated() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let mut ids = Vec::new();
    for v in [500, 600, 700] {
        ids.push(
            app.post(&c.api_key, "/v1/recarga", &format!(r#"{{"valor": {v}}}"#))
                .await
                .ok()["recargaId"]
                .clone(),
        );
        app.advance(1);
    }
    let l = app.get(&c.api_key, "/v1/recargas?size=2").await.ok();
    assert_eq!(l["total"], 3);
    assert_eq!(l["totalPaginas"], 2);
    assert_eq!(l["itens"][0]["recargaId"], ids[2]);
    assert_eq!(l["itens"][1]["recargaId"], ids[1]);
    let l = app.get(&c.api_key, "/v1/recargas?size=2&page=2").await.ok();
    assert_eq!(l["itens"][0]["recargaId"], ids[0]);
    let typed: carapi_sdk::RecargasResponse =
        serde_json::from_slice(&app.get(&c.api_key, "/v1/recargas").await.body).unwrap();
    assert_eq!(typed.itens.len(), 3);
}
