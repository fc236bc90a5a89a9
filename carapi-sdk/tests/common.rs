//! Shared helpers: a mock server, a client wired to it, and contract-shaped fixtures.

use std::time::Duration;

use carapi_sdk::{Client, ClientBuilder, Precos, RetryPolicy};
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

pub const KEY: &str = "chave-de-teste-123";
pub const CODIGO: &str = "DF-5300108-CCD63AE5A8A04271941A8A4CD8829672";
pub const CODIGO_2: &str = "MT-5107925-7515B28AEE9240ACAB464D8DF624D470";
pub const RECARGA_ID: &str = "3f2b8c1e-6d4a-4c59-9a7e-1b2c3d4e5f60";

/// A builder pointed at `server`: known key, rate limit off, fast retries, current prices.
pub fn builder(server: &MockServer) -> ClientBuilder {
    Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .retry(fast_retry())
        .precos(Precos::ATUAIS)
}

pub fn client(server: &MockServer) -> Client {
    builder(server).build().expect("client")
}

pub fn fast_retry() -> RetryPolicy {
    RetryPolicy::default().with_backoff(Duration::from_millis(1), Duration::from_millis(5))
}

/// `GET <p>` with the bearer key.
pub fn get(p: &str) -> wiremock::MockBuilder {
    Mock::given(method("GET"))
        .and(path(p))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
}

pub fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

pub fn api_error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({"success": false, "error": code, "message": message}))
}

pub async fn received(server: &MockServer, p: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.url.path() == p)
        .count()
}

pub fn car_path(codigo: &str) -> String {
    format!("/v1/car/{codigo}")
}

pub fn dados_basicos(codigo: &str) -> Value {
    json!({
        "codigoCar": codigo,
        "nomeImovel": "Chácara Exemplo",
        "areaTotalHa": "2,0131",
        "dataCadastro": "09/05/2014 17:16:10",
        "matriculaNumero": "12345",
        "matriculaData": "01/02/2010",
        "matriculaCartorio": "1º Ofício de Brasília",
        "tipoImovel": "IRU",
        "municipio": "Brasília",
        "uf": "Distrito Federal",
        "codigoProtocolo": "DF-5300108-2014-05-09-0001",
        "latitude": "15°47'38,00 S",
        "longitude": "47°52'58,00 O",
        "modulosFiscais": "0,4026"
    })
}

pub fn car_body(codigo: &str) -> Value {
    json!({
        "success": true,
        "cache": false,
        "dados": dados_basicos(codigo),
        "dataConsulta": "2026-11-21T10:00:00-03:00",
        "dataExpiracao": null
    })
}

pub fn car_completo_body(codigo: &str) -> Value {
    let mut dados = dados_basicos(codigo);
    dados["proprietariosNomes"] = json!("Fulano de Tal, Beltrana Exemplo");
    dados["proprietariosCpfs"] = json!("529.982.247-25, 111.444.777-35");
    json!({"success": true, "cache": true, "dados": dados, "dataConsulta": "2026-11-21T10:00:00", "dataExpiracao": "2026-01-02T00:00:00Z"})
}

pub fn precos_json(p: &Precos) -> Value {
    serde_json::to_value(p).unwrap()
}

pub fn saldo_body(precos: &Precos) -> Value {
    json!({
        "success": true,
        "saldoReais": 97.7,
        "limiteDiarioRequisicoes": null,
        "limiteMensalReais": 250.0,
        "precos": precos_json(precos),
        "usoHoje": {"requisicoes": 2, "gasto": 2.3, "erros": 1},
        "usoMes": {"requisicoes": 10, "gasto": 12.5}
    })
}

pub fn consumo_item(i: u32) -> Value {
    json!({
        "data": "2026-11-21T10:00:00-03:00",
        "endpoint": "/v1/car/{codigo}",
        "chaveConsulta": format!("item-{i}"),
        "statusHttp": 200,
        "cobrado": true,
        "valorCobrado": 1.0,
        "saldoAntes": 10.0,
        "saldoDepois": 9.0
    })
}

pub fn recarga_item(i: u32) -> Value {
    json!({
        "recargaId": format!("00000000-0000-4000-8000-{i:012}"),
        "data": "2026-11-21T10:00:00-03:00",
        "dataConfirmacao": null,
        "valorPago": 500.0,
        "valorBonus": 0.0,
        "percentualBonus": 0.0,
        "totalCreditado": 500.0,
        "status": "Pendente"
    })
}

pub fn recarga_status(status: &str) -> Value {
    let pago = status == "Confirmado";
    let mut v = json!({
        "success": true,
        "pago": pago,
        "recargaId": RECARGA_ID,
        "valor": 500.0,
        "status": status,
        "saldoAtual": if pago { 525.0 } else { 0.0 },
        "message": "ok"
    });
    if pago {
        v["valorBonus"] = json!(25.0);
        v["percentualBonus"] = json!(5.0);
        v["totalCreditado"] = json!(525.0);
    } else {
        v["qrCode"] = json!("000201...");
        v["qrCodeBase64"] = json!("iVBORw0KGgo=");
    }
    v
}
