//! Every error code of the contract that the reference server can produce, each through the SDK's
//! typed error, and that none of them debits.

use carapi_sdk::{ErrorCode, LimitesUpdate, NovaRecarga};
use carapi_service::{NovaConta, ReciboMode};
use carapi_tests::Environment;
use rust_decimal_macros::dec;

use crate::{
    CODIGO_REAL, MISSING_CODIGO, assert_api_error, codigo_without_recibo, cpf_without_cars,
};

#[tokio::test]
async fn lookup_errors_never_debit() {
    let env = Environment::new().await;
    let (c, conta) = env.client_with_saldo(dec!(5)).await;

    assert_api_error(c.car(MISSING_CODIGO).await, ErrorCode::CarNaoEncontrado);
    assert_api_error(
        c.car_completo(MISSING_CODIGO).await,
        ErrorCode::CarNaoEncontrado,
    );
    assert_api_error(c.recibo(MISSING_CODIGO).await, ErrorCode::CarNaoEncontrado);
    assert_api_error(
        c.recibo(codigo_without_recibo()).await,
        ErrorCode::ReciboNaoEncontrado,
    );
    // A valid CPF that owns no CAR.
    assert_api_error(
        c.proprietario(cpf_without_cars()).await,
        ErrorCode::CpfCnpjNaoEncontrado,
    );
    // 5.00 BRL cannot pay an 11.00 receipt.
    let e = assert_api_error(c.recibo(CODIGO_REAL).await, ErrorCode::SaldoInsuficiente);
    assert!(e.to_string().starts_with("402 SALDO_INSUFICIENTE: "), "{e}");

    let saldo = c.saldo().await.unwrap();
    assert_eq!(saldo.saldo_reais, dec!(5), "4xx never debits");
    let h = c.historico(&Default::default()).await.unwrap();
    assert_eq!(h.total, 6, "errors are recorded too");
    assert!(
        h.itens
            .iter()
            .all(|i| !i.cobrado && i.valor_cobrado.is_zero() && i.status_http != 200)
    );
    assert!(
        env.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}

#[tokio::test]
async fn malformed_input_is_refused_by_the_sdk_and_by_the_server() {
    let env = Environment::new().await;
    let (c, conta) = env.client_with_saldo(dec!(5)).await;

    // The SDK refuses before sending...
    assert!(matches!(
        c.car("DF-5300108-XYZ").await,
        Err(carapi_sdk::Error::Validation(_))
    ));
    assert!(matches!(
        c.proprietario("529.982.247-24").await,
        Err(carapi_sdk::Error::Validation(_))
    ));
    assert_eq!(
        c.historico(&Default::default()).await.unwrap().total,
        0,
        "nothing reached the server"
    );

    // ...and the server refuses the same input with the contract's codes.
    let http = reqwest::Client::new();
    for (path, code) in [
        ("car/DF-5300108-XYZ", ErrorCode::CodigoCarInvalido),
        (
            "car/MT-5300108-CCD63AE5A8A04271941A8A4CD8829672/completo",
            ErrorCode::CodigoCarInvalido,
        ),
        ("proprietario/52998224724", ErrorCode::CpfCnpjInvalido),
        ("proprietario/12ABC34501DE36", ErrorCode::CpfCnpjInvalido),
    ] {
        let r = http
            .get(format!("{}/v1/{path}", env.server.base_url()))
            .bearer_auth(&conta.api_key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{path}");
        let body: carapi_sdk::ApiErrorBody = r.json().await.unwrap();
        assert_eq!(ErrorCode::parse(&body.error), code, "{path}");
        assert!(!body.success && !body.message.is_empty());
    }
}

#[tokio::test]
async fn bad_key_gets_401_everywhere() {
    let env = Environment::new().await;
    let c = env.client_addr("chave-que-nao-existe");
    assert_api_error(c.saldo().await, ErrorCode::TokenInvalido);
    assert_api_error(
        c.car(carapi_sdk::sandbox::CAR_BASICO).await,
        ErrorCode::TokenInvalido,
    );
    assert_api_error(
        c.proprietario(carapi_sdk::sandbox::CPF_DOIS_CARS).await,
        ErrorCode::TokenInvalido,
    );
}

#[tokio::test]
async fn topup_errors() {
    let env = Environment::com(|c| c.pix_failure = false).await;
    let (c, _) = env.client_with_saldo(dec!(0)).await;
    let fresh = |valor| NovaRecarga {
        valor,
        confirmar_novos_precos: false,
    };
    assert_api_error(
        c.criar_recarga(&fresh(dec!(499.99))).await,
        ErrorCode::ValorMinimo,
    );
    assert_api_error(
        c.criar_recarga(&fresh(dec!(-10))).await,
        ErrorCode::ValorInvalido,
    );
    assert_api_error(
        c.recarga(uuid::Uuid::new_v4()).await,
        ErrorCode::RecargaNaoEncontrada,
    );

    let legado = env
        .conta_com(NovaConta {
            legado: true,
            ..NovaConta::default()
        })
        .await;
    let legado = env.client_addr(&legado.api_key);
    assert_api_error(
        legado.criar_recarga(&fresh(dec!(500))).await,
        ErrorCode::ConfirmacaoPrecosObrigatoria,
    );
    assert!(
        legado
            .recargas(&Default::default())
            .await
            .unwrap()
            .itens
            .is_empty(),
        "nothing created"
    );

    let without_doc = env
        .conta_com(NovaConta {
            documento: None,
            ..NovaConta::default()
        })
        .await;
    assert_api_error(
        env.client_addr(&without_doc.api_key)
            .criar_recarga(&fresh(dec!(500)))
            .await,
        ErrorCode::DocumentoAusente,
    );

    // Another account's top-up is not found.
    let mine = c.criar_recarga(&fresh(dec!(500))).await.unwrap();
    assert_api_error(
        legado.recarga(mine.recarga_id).await,
        ErrorCode::RecargaNaoEncontrada,
    );

    let limite = LimitesUpdate {
        limite_diario_requisicoes: Some(Some(100_001)),
        ..Default::default()
    };
    assert_api_error(
        c.atualizar_limites(&limite).await,
        ErrorCode::LimiteInvalido,
    );
    let limite = LimitesUpdate {
        limite_mensal_reais: Some(Some(dec!(1000000.01))),
        ..Default::default()
    };
    assert_api_error(
        c.atualizar_limites(&limite).await,
        ErrorCode::LimiteInvalido,
    );
}

#[tokio::test]
async fn provider_failure_is_erro_pix() {
    let env = Environment::com(|c| c.pix_failure = true).await;
    let (c, _) = env.client_with_saldo(dec!(0)).await;
    let fresh = NovaRecarga {
        valor: dec!(500),
        confirmar_novos_precos: false,
    };
    assert_api_error(c.criar_recarga(&fresh).await, ErrorCode::ErroPix);
}

#[tokio::test]
async fn receipt_service_failures_are_never_charged() {
    for (mode, code) in [
        (ReciboMode::Unavailable, ErrorCode::ServicoIndisponivel),
        (ReciboMode::FailureStream, ErrorCode::ReciboIndisponivel),
    ] {
        let env = Environment::com(|c| c.recibo = mode).await;
        let conta = env.conta(dec!(50)).await;
        // No retries: each attempt would be one more recorded request.
        let c = env
            .builder(&conta.api_key)
            .retry(carapi_sdk::RetryPolicy::disabled())
            .build()
            .unwrap();
        assert_api_error(c.recibo(CODIGO_REAL).await, code);
        assert_eq!(c.saldo().await.unwrap().saldo_reais, dec!(50));
    }
}

#[tokio::test]
async fn daily_and_monthly_limits_give_429() {
    let env = Environment::new().await;
    let (c, _) = env.client_with_saldo(dec!(100)).await;
    let diario = LimitesUpdate {
        limite_diario_requisicoes: Some(Some(2)),
        ..Default::default()
    };
    c.atualizar_limites(&diario).await.unwrap();
    c.car(CODIGO_REAL).await.unwrap();
    c.car(CODIGO_REAL).await.unwrap();
    assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);

    let (c, _) = env.client_with_saldo(dec!(100)).await;
    let mensal = LimitesUpdate {
        limite_mensal_reais: Some(Some(dec!(3))),
        ..Default::default()
    };
    c.atualizar_limites(&mensal).await.unwrap();
    c.car_completo(CODIGO_REAL).await.unwrap(); // 2.30
    assert_api_error(c.car_completo(CODIGO_REAL).await, ErrorCode::LimiteExcedido); // 4.60 > 3
    // A ceiling: 2.30 + 1.00 would pass 3.00 too.
    assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);
    assert_eq!(c.saldo().await.unwrap().uso_mes.gasto, dec!(2.30));
}

#[tokio::test]
async fn every_sdk_error_code_is_typed() {
    // The codes the server cannot be made to produce here still decode into their variants.
    for code in ErrorCode::ALL {
        assert!(
            !matches!(ErrorCode::parse(code.as_str()), ErrorCode::Other(_)),
            "{code}"
        );
    }
}
