//! The contract's sandbox table, row by row: fixed answers, `sandbox: true`, and nothing moves.

use carapi_sdk::{ErrorCode, sandbox};
use carapi_tests::Environment;
use rust_decimal_macros::dec;

use crate::assert_api_error;

#[tokio::test]
async fn every_reserved_value_answers_as_the_table_says_and_moves_nothing() {
    let env = Environment::new().await;
    // Zero balance and a daily limit of 1: a real lookup would be refused, sandbox ones are not.
    let (c, conta) = env.client_with_saldo(dec!(0)).await;
    c.atualizar_limites(&carapi_sdk::LimitesUpdate {
        limite_diario_requisicoes: Some(Some(1)),
        ..Default::default()
    })
    .await
    .unwrap();
    let antes = c.saldo().await.unwrap();

    for _ in 0..2 {
        let r = c.car(sandbox::CAR_BASICO).await.unwrap();
        assert!(r.sandbox && r.dados.codigo_car == sandbox::CAR_BASICO);
        let r = c.car_completo(sandbox::CAR_BASICO).await.unwrap();
        assert!(r.sandbox && r.dados.proprietarios_nomes.is_some());
        let pdf = c.recibo(sandbox::CAR_BASICO).await.unwrap();
        assert!(pdf.bytes.starts_with(b"%PDF-"));

        for missing in [
            c.car(sandbox::CAR_NAO_EXISTE).await.map(|_| ()),
            c.car_completo(sandbox::CAR_NAO_EXISTE).await.map(|_| ()),
            c.recibo(sandbox::CAR_NAO_EXISTE).await.map(|_| ()),
        ] {
            let e = assert_api_error(missing, ErrorCode::CarNaoEncontrado);
            assert!(e.sandbox, "sandbox errors carry sandbox: true");
        }
        for without_saldo in [
            c.car(sandbox::CAR_SEM_SALDO).await.map(|_| ()),
            c.car_completo(sandbox::CAR_SEM_SALDO).await.map(|_| ()),
            c.recibo(sandbox::CAR_SEM_SALDO).await.map(|_| ()),
        ] {
            assert!(assert_api_error(without_saldo, ErrorCode::SaldoInsuficiente).sandbox);
        }

        let two = c.proprietario(sandbox::CPF_DOIS_CARS).await.unwrap();
        assert!(two.sandbox && !two.truncado && two.total == 2 && two.itens.len() == 2);
        let many = c.proprietario(sandbox::CNPJ_TRUNCADO).await.unwrap();
        assert!(many.sandbox && many.truncado && many.itens.len() as u32 <= many.limite);
        assert!(
            assert_api_error(
                c.proprietario(sandbox::CPF_NAO_ENCONTRADO).await,
                ErrorCode::CpfCnpjNaoEncontrado
            )
            .sandbox
        );
    }

    let depois = c.saldo().await.unwrap();
    assert_eq!(depois.saldo_reais, antes.saldo_reais, "no debit");
    assert_eq!(depois.uso_hoje, antes.uso_hoje, "no limit or usage counted");
    assert_eq!(depois.uso_mes, antes.uso_mes);
    assert_eq!(
        c.gasto().total(),
        dec!(0),
        "the SDK counts sandbox lookups as free"
    );
    assert!(
        env.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );

    // The daily limit of 1 is still entirely available for a real lookup.
    let (payer, _) = env.client_with_saldo(dec!(10)).await;
    assert!(payer.car(sandbox::CAR_BASICO).await.unwrap().sandbox);
}

#[tokio::test]
async fn a_bad_key_still_gets_401_for_reserved_values() {
    let env = Environment::new().await;
    let c = env.client_addr("x".repeat(43).as_str());
    for r in [
        c.car(sandbox::CAR_BASICO).await.map(|_| ()),
        c.car(sandbox::CAR_SEM_SALDO).await.map(|_| ()),
        c.recibo(sandbox::CAR_BASICO).await.map(|_| ()),
        c.proprietario(sandbox::CPF_DOIS_CARS).await.map(|_| ()),
    ] {
        assert_api_error(r, ErrorCode::TokenInvalido);
    }
}
