//! Every operation against a mock: path, method, query, body, key, and the decoded answer.

use carapi_sdk::{
    EndpointConsulta, HistoricoParams, LimitesUpdate, NovaRecarga, RecargaStatus, RecargasParams,
    StatusConsulta, sandbox,
};
use rust_decimal_macros::dec;
use serde_json::json;
use uuid::Uuid;
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer};

use crate::common::*;

#[tokio::test]
async fn car_normalises_the_code_and_decodes() {
    let server = MockServer::start().await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let r = c
        .car(" df-5300108-ccd6.3ae5.a8a0.4271.941a.8a4c.d882.9672 ")
        .await
        .unwrap();
    assert_eq!(r.dados.codigo_car, CODIGO);
    assert_eq!(r.dados.area_total(), Some(dec!(2.0131)));
    assert!(r.dados.latitude_degrees().unwrap() < dec!(-15));
    assert!(!r.sandbox && !r.cache);
    assert_eq!(r.data_expiracao, None);
    assert_eq!(c.gasto().confirmado, dec!(1.00));
}

#[tokio::test]
async fn car_completo() {
    let server = MockServer::start().await;
    get(&format!("/v1/car/{CODIGO}/completo"))
        .respond_with(ok(car_completo_body(CODIGO)))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let r = c.car_completo(CODIGO).await.unwrap();
    assert!(r.cache, "a cached answer is still charged");
    assert_eq!(
        r.dados.proprietarios()[0],
        ("Fulano de Tal".to_owned(), "529.982.247-25".to_owned())
    );
    assert_eq!(r.dados.municipio.as_deref(), Some("Brasília"));
    assert!(r.data_expiracao.is_some());
    assert_eq!(c.gasto().confirmado, dec!(2.30));
}

#[tokio::test]
async fn proprietario_sends_the_bare_document() {
    let server = MockServer::start().await;
    let body = json!({
        "success": true, "total": 1, "limite": 200, "truncado": false,
        "itens": [{"registroCar": CODIGO, "codigoProtocolo": null, "nomeImovel": "Sítio", "matriculaNumero": null,
                   "municipio": "Brasília", "uf": "Distrito Federal", "areaTotalHa": "1,0000",
                   "proprietarioConsultado": "529.982.247-25"}]
    });
    get("/v1/proprietario/52998224725")
        .respond_with(ok(body))
        .expect(1)
        .mount(&server)
        .await;
    get("/v1/proprietario/12ABC34501DE35")
        .respond_with(ok(json!({
            "success": true, "total": 0, "limite": 200, "truncado": true, "itens": []
        })))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let r = c.proprietario("529.982.247-25").await.unwrap();
    assert_eq!(r.itens[0].registro_car, CODIGO);
    assert_eq!(r.limite, 200);
    assert!(c.proprietario("12.abc.345/01de-35").await.unwrap().truncado);
    assert_eq!(c.gasto().confirmado, dec!(5.20));
}

#[tokio::test]
async fn saldo() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::LEGADOS)))
        .expect(1)
        .mount(&server)
        .await;
    let s = client(&server).saldo().await.unwrap();
    assert_eq!(s.saldo_reais, dec!(97.7));
    assert_eq!(s.limite_diario_requisicoes, None);
    assert_eq!(s.limite_mensal_reais, Some(dec!(250)));
    assert_eq!(s.precos, carapi_sdk::Precos::LEGADOS);
    assert_eq!(s.uso_hoje.erros, 1);
    assert_eq!(s.uso_mes.gasto, dec!(12.5));
}

#[tokio::test]
async fn historico_sends_the_filters() {
    let server = MockServer::start().await;
    get("/v1/historico")
        .and(query_param("page", "2"))
        .and(query_param("size", "50"))
        .and(query_param("busca", "DF 53"))
        .and(query_param("endpoint", "/v1/car/{codigo}/completo"))
        .and(query_param("status", "erro"))
        .respond_with(ok(
            json!({"success": true, "page": 2, "size": 50, "total": 51, "totalPaginas": 2,
                                "itens": [consumo_item(51)]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let p = HistoricoParams {
        page: Some(2),
        size: Some(50),
        busca: Some("DF 53".into()),
        endpoint: Some(EndpointConsulta::CarCompleto),
        status: Some(StatusConsulta::Erro),
    };
    let h = client(&server).historico(&p).await.unwrap();
    assert_eq!(h.total, 51);
    assert_eq!(h.itens[0].chave_consulta.as_deref(), Some("item-51"));
    assert_eq!(h.itens[0].saldo_depois, Some(dec!(9)));
}

#[tokio::test]
async fn limites_get_and_put() {
    let server = MockServer::start().await;
    let resp = json!({"success": true, "message": "Limites atualizados", "limiteDiarioRequisicoes": null,
                      "limiteMensalReais": 250.5});
    get("/v1/limites")
        .respond_with(ok(resp.clone()))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/v1/limites"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("content-type", "application/json"))
        .and(body_json(
            json!({"limiteDiarioRequisicoes": null, "limiteMensalReais": 250.5}),
        ))
        .respond_with(ok(resp))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    assert_eq!(
        c.limites().await.unwrap().limite_mensal_reais,
        Some(dec!(250.5))
    );
    let up = LimitesUpdate {
        limite_diario_requisicoes: Some(None),
        limite_mensal_reais: Some(Some(dec!(250.5))),
    };
    let r = c.atualizar_limites(&up).await.unwrap();
    assert_eq!(r.message, "Limites atualizados");
    assert_eq!(r.limite_diario_requisicoes, None);
}

#[tokio::test]
async fn uso() {
    let server = MockServer::start().await;
    get("/v1/uso")
        .respond_with(ok(json!({"success": true, "periodoDias": 30,
            "itens": [{"endpoint": "/v1/car/{codigo}", "quantidade": 3, "valorTotal": 3.0}]})))
        .expect(1)
        .mount(&server)
        .await;
    let u = client(&server).uso().await.unwrap();
    assert_eq!(u.periodo_dias, 30);
    assert_eq!(u.itens[0].valor_total, dec!(3));
}

fn faixas_body(preview: bool) -> serde_json::Value {
    let atuais = precos_json(&carapi_sdk::Precos::ATUAIS);
    json!({
        "success": true, "valorMinimo": 500.0, "usaPrecoLegado": false,
        "precosAtuais": atuais, "precosAposRecarga": atuais, "confirmarNovosPrecosObrigatorio": false,
        "faixas": [{"valorMinimo": 500.0, "valorMaximo": 999.99, "percentualBonus": 0.0},
                   {"valorMinimo": 1000.0, "valorMaximo": null, "percentualBonus": 5.0}],
        "preview": if preview { json!({"valorPago": 1000.0, "percentualBonus": 5.0, "valorBonus": 50.0, "totalCreditado": 1050.0}) } else { json!(null) }
    })
}

#[tokio::test]
async fn faixas_recarga_with_and_without_preview() {
    let server = MockServer::start().await;
    get("/v1/recarga/faixas")
        .and(query_param("valor", "1000"))
        .respond_with(ok(faixas_body(true)))
        .expect(1)
        .mount(&server)
        .await;
    get("/v1/recarga/faixas")
        .respond_with(ok(faixas_body(false)))
        .expect(1)
        .mount(&server)
        .await;
    let c = client(&server);
    let f = c.faixas_recarga(Some(dec!(1000.00))).await.unwrap();
    assert_eq!(f.preview.unwrap().total_creditado, dec!(1050));
    let f = c.faixas_recarga(None).await.unwrap();
    assert!(f.preview.is_none());
    assert_eq!(f.faixas[1].valor_maximo, None);
    assert_eq!(f.valor_minimo, dec!(500));
}

#[tokio::test]
async fn criar_recarga_posts_the_body() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/recarga"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_json(json!({"valor": 500.0, "confirmarNovosPrecos": true})))
        .respond_with(ok(json!({
            "success": true, "reaproveitada": false, "recargaId": RECARGA_ID, "paymentId": "pay_1",
            "valor": 500.0, "status": "Pendente", "qrCode": "00020101...", "qrCodeBase64": "iVBORw0KGgo=",
            "previewBonus": {"percentualBonus": 0.0, "valorBonus": 0.0, "totalCreditado": 500.0},
            "message": "PIX criado"
        })))
        .expect(1)
        .mount(&server)
        .await;
    let n = client(&server)
        .criar_recarga(&NovaRecarga {
            valor: dec!(500),
            confirmar_novos_precos: true,
        })
        .await
        .unwrap();
    assert_eq!(n.recarga_id, Uuid::parse_str(RECARGA_ID).unwrap());
    assert_eq!(n.status, RecargaStatus::Pendente);
    assert!(!n.reaproveitada);
    assert_eq!(n.preview_bonus.total_creditado, dec!(500));
}

#[tokio::test]
async fn recarga_pendente() {
    let server = MockServer::start().await;
    get(&format!("/v1/recarga/{RECARGA_ID}"))
        .respond_with(ok(recarga_status("Pendente")))
        .expect(1)
        .mount(&server)
        .await;
    let st = client(&server)
        .recarga(Uuid::parse_str(RECARGA_ID).unwrap())
        .await
        .unwrap();
    assert_eq!(st.status, RecargaStatus::Pendente);
    assert!(!st.pago);
    assert!(st.qr_code.is_some());
    assert_eq!(st.valor_bonus, None);
}

#[tokio::test]
async fn recargas_with_status_filter() {
    let server = MockServer::start().await;
    get("/v1/recargas")
        .and(query_param("status", "Pendente"))
        .and(query_param("size", "10"))
        .respond_with(ok(
            json!({"success": true, "page": 1, "size": 10, "total": 1, "totalPaginas": 1,
                                "itens": [recarga_item(1)]}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let p = RecargasParams {
        page: None,
        size: Some(10),
        status: Some(RecargaStatus::Pendente),
    };
    let r = client(&server).recargas(&p).await.unwrap();
    assert_eq!(r.itens.len(), 1);
    assert_eq!(r.itens[0].valor_pago, dec!(500));
}

#[tokio::test]
async fn sandbox_values_cost_nothing() {
    let server = MockServer::start().await;
    let mut body = car_body(sandbox::CAR_BASICO);
    body["sandbox"] = json!(true);
    get(&car_path(sandbox::CAR_BASICO))
        .respond_with(ok(body))
        .expect(1)
        .mount(&server)
        .await;
    get("/v1/proprietario/00000000000")
        .respond_with(ok(json!({"success": true, "sandbox": true, "total": 2, "limite": 200, "truncado": false, "itens": []})))
        .expect(1)
        .mount(&server)
        .await;
    // No price table given: a sandbox lookup must not even fetch the prices.
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .expect(0)
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .build()
        .unwrap();
    assert!(c.car(sandbox::CAR_BASICO).await.unwrap().sandbox);
    assert!(
        c.proprietario(sandbox::CPF_DOIS_CARS)
            .await
            .unwrap()
            .sandbox
    );
    assert_eq!(c.gasto().confirmado, dec!(0));
}

#[tokio::test]
async fn gasto_is_exact_after_a_charged_lookup_without_a_cap_or_a_prior_saldo() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::LEGADOS)))
        .expect(1)
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .expect(3)
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .build()
        .unwrap();
    let (a, b) = tokio::join!(c.car(CODIGO), c.car(CODIGO));
    a.unwrap();
    b.unwrap();
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.nao_precificadas),
        (dec!(1.00), 0),
        "2 x 0.50 at the legacy table, learned by one saldo request"
    );
    c.car(CODIGO).await.unwrap();
    assert_eq!(c.gasto().confirmado, dec!(1.50));
}

#[tokio::test]
async fn a_lookup_goes_on_unpriced_when_the_prices_cannot_be_read() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(api_error(500, "ERRO_INTERNO", "x"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .mount(&server)
        .await;
    get(&car_path(CODIGO))
        .respond_with(ok(car_body(CODIGO)))
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .retry(carapi_sdk::RetryPolicy::disabled())
        .build()
        .unwrap();
    c.car(CODIGO).await.unwrap();
    let g = c.gasto();
    assert_eq!((g.confirmado, g.nao_precificadas), (dec!(0), 1));
    c.car(CODIGO).await.unwrap();
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.nao_precificadas),
        (dec!(2.00), 0),
        "the next lookup read the prices and priced the first one too"
    );
}

#[tokio::test]
async fn a_confirmed_top_up_refreshes_the_prices() {
    let server = MockServer::start().await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::LEGADOS)))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    get("/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .mount(&server)
        .await;
    get(&format!("/v1/recarga/{RECARGA_ID}"))
        .respond_with(ok(recarga_status("Confirmado")))
        .mount(&server)
        .await;
    let c = carapi_sdk::Client::builder()
        .base_url(server.uri())
        .api_key(KEY)
        .rate_limit(None)
        .build()
        .unwrap();
    assert_eq!(c.precos().await.unwrap(), carapi_sdk::Precos::LEGADOS);
    c.recarga(Uuid::parse_str(RECARGA_ID).unwrap())
        .await
        .unwrap();
    assert_eq!(c.precos().await.unwrap(), carapi_sdk::Precos::ATUAIS);
}

#[tokio::test]
async fn base_url_with_a_path_prefix() {
    let server = MockServer::start().await;
    get("/api/v1/saldo")
        .respond_with(ok(saldo_body(&carapi_sdk::Precos::ATUAIS)))
        .expect(1)
        .mount(&server)
        .await;
    let c = builder(&server)
        .base_url(format!("{}/api/", server.uri()))
        .build()
        .unwrap();
    c.saldo().await.unwrap();
}

#[tokio::test]
async fn client_is_send_sync_clone_and_hides_the_key() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    fn assert_send<T: Send + Sync + 'static>() {}
    assert_traits::<carapi_sdk::Client>();
    assert_send::<carapi_sdk::Error>();
    assert_send::<carapi_sdk::ReciboDownload>();
    let server = MockServer::start().await;
    let c = client(&server);
    let dbg = format!("{c:?} {:?}", builder(&server));
    assert!(!dbg.contains(KEY), "{dbg}");
    assert!(dbg.contains("<redacted>"));
}
