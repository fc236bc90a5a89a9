//! The SDK's money figures over a real socket, with a proxy between the SDK and the reference
//! server: a lost answer to a charged lookup, a 404 in flight under a spend cap, a 402.

use carapi_sdk::{
    ClientBuilder, Error, ErrorCode, EscopoLimite, Gasto, HistoricoParams, LimitesUpdate, Precos,
    dec,
};
use carapi_tests::Environment;

use crate::proxy::{Action, Proxy, client_without_reuse};
use crate::{CODIGO_REAL, MISSING_CODIGO};

/// A client for `api_key` going through `proxy`, one connection per request.
fn via(proxy: &Proxy, api_key: &str) -> ClientBuilder {
    carapi_sdk::Client::builder()
        .base_url(&proxy.base_url)
        .api_key(api_key)
        .http_client(client_without_reuse())
}

#[tokio::test]
async fn gasto_is_exact_after_a_charged_lookup_with_no_prior_saldo_and_no_cap() {
    let env = Environment::new().await;
    let conta = env
        .conta_com(carapi_service::NovaConta {
            legado: true,
            ..Default::default()
        })
        .await;
    let c = env.client_addr(&conta.api_key);
    c.car(CODIGO_REAL).await.unwrap();
    let g = c.gasto();
    assert_eq!(
        (g.confirmado, g.incerto, g.nao_precificadas),
        (Precos::LEGADOS.car_basico, dec!(0), 0),
        "the client read the account's (legacy) prices before its first charged lookup"
    );
    c.car_completo(CODIGO_REAL).await.unwrap();
    let cobrado: rust_decimal::Decimal = c
        .historico(&HistoricoParams::default())
        .await
        .unwrap()
        .itens
        .iter()
        .map(|i| i.valor_cobrado)
        .sum();
    assert_eq!(
        c.gasto().confirmado,
        cobrado,
        "what the history shows charged"
    );
}

#[tokio::test]
async fn a_lost_answer_to_a_charged_lookup_is_uncertain_capped_and_resolved_against_history() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    let proxy = Proxy::new_for(&env.server.base_url(), |line| {
        if line.contains(CODIGO_REAL) {
            Action::LoseReply
        } else {
            Action::Pass
        }
    })
    .await;
    let c = via(&proxy, &conta.api_key)
        .max_spend(dec!(2.50))
        .build()
        .unwrap();

    let e = c.car(CODIGO_REAL).await.unwrap_err();
    assert!(matches!(e, Error::Transport { sent: true, .. }), "{e:?}");
    assert!(e.may_have_charged(), "{e}");
    assert!(!e.is_retryable(), "re-sending would charge twice");
    let g: Gasto = c.gasto();
    assert_eq!(g.confirmado, dec!(0));
    assert_eq!(
        g.incerto,
        Precos::ATUAIS.car_basico,
        "possibly charged, at its price"
    );
    assert_eq!(g.nao_precificadas, 0);

    // The cap counts it: 1.00 uncertain + 2.30 > 2.50.
    proxy.rule(|_| Action::Pass);
    match c.car_completo(CODIGO_REAL).await.unwrap_err() {
        Error::SpendLimit {
            gasto,
            reservado: reserved,
            ..
        } => assert_eq!((gasto, reserved), (dec!(1.00), dec!(0))),
        other => panic!("expected SpendLimit, got {other:?}"),
    }

    // The server did charge it, once: the SDK did not re-send.
    let h = c.historico(&HistoricoParams::default()).await.unwrap();
    assert_eq!(h.itens.len(), 1, "{:?}", h.itens);
    assert!(h.itens[0].cobrado);

    let r = c.settle_incertos().await.unwrap();
    assert_eq!((r.cobradas, r.nao_cobradas, r.pendentes), (1, 0, 0));
    let g = c.gasto();
    assert_eq!((g.confirmado, g.incerto), (dec!(1.00), dec!(0)));
}

#[tokio::test]
async fn a_404_in_flight_does_not_refuse_a_lookup_that_fits() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    let proxy = Proxy::new_for(&env.server.base_url(), |line| {
        if line.contains(MISSING_CODIGO) {
            Action::Hold
        } else {
            Action::Pass
        }
    })
    .await;
    let c = via(&proxy, &conta.api_key)
        .max_spend(dec!(3.00))
        .precos(Precos::ATUAIS)
        .build()
        .unwrap();

    let c404 = c.clone();
    let in_flight = tokio::spawn(async move { c404.car(MISSING_CODIGO).await });
    proxy.holding().await; // 1.00 reserved, request at the proxy
    let c2 = c.clone();
    let real = tokio::spawn(async move { c2.car_completo(CODIGO_REAL).await });
    // Let the second lookup reach the guard while the first holds its reservation
    // (1.00 + 2.30 > 3.00); the old guard refused it there.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    proxy.release();

    let e = in_flight.await.unwrap().unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::CarNaoEncontrado));
    let ok = real.await.unwrap();
    assert!(
        ok.is_ok(),
        "a lookup that fits once the 404 settles waits: {ok:?}"
    );
    assert_eq!(c.gasto().confirmado, dec!(2.30));
}

#[tokio::test]
async fn a_402_carries_operation_and_price_and_the_shortfall_takes_one_saldo() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(1.50)).await;
    let c = env.client_addr(&conta.api_key);
    let e = c.car_completo(CODIGO_REAL).await.unwrap_err();
    let api = e.api().expect("API error");
    assert_eq!(api.code, ErrorCode::SaldoInsuficiente);
    assert_eq!(api.operation, Some("car_completo"));
    // Prices were not known without a cap: the shortfall helper learns them in its one call.
    let f = c.falta(&e).await.unwrap().expect("a 402 of a lookup");
    assert_eq!(f.operation, "car_completo");
    assert_eq!(f.preco, dec!(2.30));
    assert_eq!(f.saldo, dec!(1.50));
    assert_eq!(f.falta, dec!(0.80));
    // Once known, the price rides on the error itself.
    let e = c.recibo(CODIGO_REAL).await.unwrap_err();
    assert_eq!(e.api().unwrap().preco, Some(dec!(11.00)));
    assert_eq!(c.falta(&Error::Config("x".into())).await.unwrap(), None);
}

#[tokio::test]
async fn a_429_tells_the_daily_and_monthly_limits_from_the_rate_and_is_not_retried() {
    let env = Environment::new().await;
    for (update, scope) in [
        (
            LimitesUpdate {
                limite_diario_requisicoes: Some(Some(1)),
                ..Default::default()
            },
            EscopoLimite::Diario,
        ),
        (
            LimitesUpdate {
                limite_mensal_reais: Some(Some(dec!(1.50))),
                ..Default::default()
            },
            EscopoLimite::Mensal,
        ),
    ] {
        let conta = env.conta(dec!(100)).await;
        let c = env.client_addr(&conta.api_key);
        c.atualizar_limites(&update).await.unwrap();
        c.car(CODIGO_REAL).await.unwrap();
        let e = c.car(CODIGO_REAL).await.unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::LimiteExcedido), "{e}");
        assert_eq!(e.limite(), Some(scope), "{e:?}");
        assert!(
            !e.is_retryable(),
            "{scope}: lasts until Brasília midnight or the next month"
        );
        assert!(!e.may_have_charged());
        // Not retried by the client either: one refused request in the history.
        let h = c.historico(&HistoricoParams::default()).await.unwrap();
        let refused = h.itens.iter().filter(|i| i.status_http == 429).count();
        assert_eq!(refused, 1, "{scope}: {:?}", h.itens);
    }
}
