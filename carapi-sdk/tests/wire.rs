//! The contract's JSON numbers read and written exactly by every model that carries money, and
//! an application's own `Decimal`s untouched by depending on the SDK.

use std::str::FromStr;

use carapi_sdk::{
    Decimal, FaixasResponse, HistoricoResponse, LimitesResponse, LimitesUpdate, NovaRecarga,
    RecargaCriadaResponse, RecargaStatusResponse, RecargasResponse, SaldoResponse, UsoResponse,
    dec,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::*;

/// Decodes `wire`, encodes it back, and compares: every number equal as a decimal (its text
/// on the wire read exactly), nothing lost or added.
fn round_trip<T: DeserializeOwned + Serialize>(wire: Value) -> T {
    let model: T = serde_json::from_value(wire.clone()).unwrap();
    let back = serde_json::to_value(&model).unwrap();
    assert_same(&wire, &back, "");
    model
}

fn assert_same(a: &Value, b: &Value, path: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.to_string(), y.to_string());
            let (dx, dy) = (
                Decimal::from_str(&x).unwrap(),
                Decimal::from_str(&y).unwrap(),
            );
            assert_eq!(dx, dy, "{path}: {x} became {y}");
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let other = y.get(k).unwrap_or_else(|| panic!("{path}.{k} lost"));
                assert_same(v, other, &format!("{path}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{path}");
            for (k, (v, w)) in x.iter().zip(y).enumerate() {
                assert_same(v, w, &format!("{path}[{k}]"));
            }
        }
        _ => assert_eq!(a, b, "{path}"),
    }
}

#[test]
fn every_money_model_round_trips_the_contracts_numbers() {
    let mut saldo = saldo_body(&carapi_sdk::Precos::LEGADOS);
    saldo["saldoReais"] = json!(1234567.89);
    saldo["limiteMensalReais"] = json!(0.1);
    let s: SaldoResponse = round_trip(saldo);
    assert_eq!(s.saldo_reais, dec!(1234567.89));
    assert_eq!(s.limite_mensal_reais, Some(dec!(0.1)));
    assert_eq!(s.precos.car_completo, dec!(1.50));

    let mut item = consumo_item(1);
    item["valorCobrado"] = json!(2.3);
    item["saldoAntes"] = json!(97.7);
    item["saldoDepois"] = json!(95.4);
    let h: HistoricoResponse = round_trip(json!({
        "success": true, "page": 1, "size": 20, "total": 1, "totalPaginas": 1, "itens": [item]
    }));
    assert_eq!(h.itens[0].saldo_depois, Some(dec!(95.4)));

    round_trip::<LimitesResponse>(json!({
        "success": true, "message": "ok", "limiteDiarioRequisicoes": 50, "limiteMensalReais": 999999.99
    }));
    round_trip::<UsoResponse>(json!({
        "success": true, "periodoDias": 30,
        "itens": [{"endpoint": "/v1/car/{codigo}", "quantidade": 3, "valorTotal": 3.3}]
    }));
    let precos = json!({"carBasico": 1.0, "carCompleto": 2.3, "proprietario": 2.6, "recibo": 11.0});
    round_trip::<FaixasResponse>(json!({
        "success": true, "valorMinimo": 500, "usaPrecoLegado": false,
        "precosAtuais": precos, "precosAposRecarga": precos,
        "confirmarNovosPrecosObrigatorio": false,
        "faixas": [{"valorMinimo": 500, "valorMaximo": 999.99, "percentualBonus": 0},
                   {"valorMinimo": 5000, "valorMaximo": null, "percentualBonus": 10}],
        "preview": {"valorPago": 1234.56, "percentualBonus": 5, "valorBonus": 61.73, "totalCreditado": 1296.29}
    }));
    round_trip::<RecargaCriadaResponse>(json!({
        "success": true, "reaproveitada": false, "recargaId": RECARGA_ID, "paymentId": "p",
        "valor": 1000.5, "status": "Pendente", "qrCode": "000201", "qrCodeBase64": "iVBO",
        "previewBonus": {"percentualBonus": 5, "valorBonus": 50.03, "totalCreditado": 1050.53},
        "message": "ok"
    }));
    round_trip::<RecargaStatusResponse>(recarga_status("Confirmado"));
    round_trip::<RecargasResponse>(json!({
        "success": true, "page": 1, "size": 20, "total": 1, "totalPaginas": 1,
        "itens": [recarga_item(1)]
    }));
    let body = serde_json::to_value(NovaRecarga::new(dec!(1500.25))).unwrap();
    assert_eq!(
        body["valor"],
        json!(1500.25),
        "a JSON number, as the contract has it"
    );
    let limites = serde_json::to_value(LimitesUpdate {
        limite_mensal_reais: Some(Some(dec!(250.50))),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(limites["limiteMensalReais"], json!(250.5));
}

#[test]
fn the_applications_own_decimals_keep_their_serde() {
    // Depending on the SDK turns no crate-wide rust_decimal feature on: a Decimal of the
    // application serialises as rust_decimal's default (a string, every digit kept).
    assert_eq!(serde_json::to_string(&dec!(1.30)).unwrap(), "\"1.30\"");
    assert_eq!(
        serde_json::to_string(&dec!(12345678901234567.89)).unwrap(),
        "\"12345678901234567.89\""
    );
}
