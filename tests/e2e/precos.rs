//! The price switch: a legacy account pays legacy prices until its first confirmed top-up, then
//! the current ones.

use std::time::Duration;

use carapi_sdk::{NovaRecarga, Precos};
use carapi_service::NovaConta;
use carapi_tests::Environment;
use rust_decimal_macros::dec;

use crate::CODIGO_REAL;

#[tokio::test]
async fn legacy_account_moves_to_current_prices_on_its_first_confirmed_topup() {
    let env = Environment::new().await;
    let conta = env
        .conta_com(NovaConta {
            saldo: dec!(20),
            legado: true,
            ..NovaConta::default()
        })
        .await;
    let c = env.client_addr(&conta.api_key);

    assert_eq!(c.saldo().await.unwrap().precos, Precos::LEGADOS);
    c.car(CODIGO_REAL).await.unwrap();
    assert_eq!(
        c.saldo().await.unwrap().saldo_reais,
        dec!(19.50),
        "legacy basic price 0.50"
    );

    let faixas = c.faixas_recarga(None).await.unwrap();
    assert!(faixas.usa_preco_legado && faixas.confirmar_novos_precos_obrigatorio);
    assert_eq!(
        (faixas.precos_atuais, faixas.precos_apos_recarga),
        (Precos::LEGADOS, Precos::ATUAIS)
    );

    // A pending top-up changes nothing yet.
    let created = c
        .criar_recarga(&NovaRecarga {
            valor: dec!(500),
            confirmar_novos_precos: true,
        })
        .await
        .unwrap();
    c.car(CODIGO_REAL).await.unwrap();
    assert_eq!(c.saldo().await.unwrap().saldo_reais, dec!(19.00));

    env.server.pay_recarga(created.recarga_id).await.unwrap();
    let end = c
        .wait_for_recarga(created.recarga_id, Duration::from_secs(60))
        .await
        .unwrap();
    let total = end.total_creditado.expect("filled once paid");
    assert_eq!(end.saldo_atual, dec!(19.00) + total);

    let saldo = c.saldo().await.unwrap();
    assert_eq!(saldo.precos, Precos::ATUAIS);
    c.car(CODIGO_REAL).await.unwrap();
    assert_eq!(
        c.saldo().await.unwrap().saldo_reais,
        saldo.saldo_reais - dec!(1.00),
        "current basic price 1.00"
    );
    assert!(
        !c.faixas_recarga(None)
            .await
            .unwrap()
            .confirmar_novos_precos_obrigatorio
    );
    assert!(
        env.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}
