//! The SDK's behaviours against the double over a real socket: what it retries, what it
//! refuses to re-send, how its spend cap counts an uncertain charge, how its waiter sees a
//! top-up that only reconciliation confirms.

use std::time::{Duration, Instant};

use carapi_sdk::{Error, ErrorCode, NovaRecarga, RecargaStatus, dec};
use carapi_test_double::{Fault, FaultLimit};

use super::on_each_database;
use crate::CODIGO_REAL;

#[tokio::test]
async fn a_503_with_retry_after_is_retried_and_charged_once() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(50)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(
            Fault::Error {
                codigo: ErrorCode::ServicoIndisponivel,
                retry_after: Some(1),
                limite: None,
            }
            .on("/v1/car/{codigoCar}/recibo")
            .next_ones(2),
        );
        let start = Instant::now();
        let recibo = c.recibo(CODIGO_REAL).await.unwrap();
        assert!(recibo.bytes.starts_with(b"%PDF"));
        assert!(
            start.elapsed() >= Duration::from_secs(2),
            "waited Retry-After twice"
        );
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!(state.debited, dec!(11.00), "three attempts, one charge");
        assert!(state.ledger_consistent);
    })
    .await;
}

#[tokio::test]
async fn a_rate_429_is_retried_after_its_retry_after() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::limite(FaultLimit::Rate, 1).on("/v1/car/{codigoCar}"));
        c.car(CODIGO_REAL).await.unwrap();
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(1.00));
    })
    .await;
}

#[tokio::test]
async fn a_reset_free_call_is_retried_but_a_lost_charged_answer_is_not() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        srv.inject(Fault::ResetConnection.on("/v1/saldo"));
        c.saldo()
            .await
            .expect("a free call is re-sent after a reset");
        srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}/completo"));
        let e = c.car_completo(CODIGO_REAL).await.unwrap_err();
        assert!(matches!(e, Error::Transport { sent: true, .. }), "{e:?}");
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(2.30));
    })
    .await;
}

#[tokio::test]
async fn the_spend_cap_counts_an_uncertain_charge_until_history_settles_it() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
        let c = srv
            .client_builder(&conta)
            .max_spend(dec!(3.00))
            .build()
            .unwrap();
        srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}"));
        assert!(c.car(CODIGO_REAL).await.unwrap_err().may_have_charged());
        assert_eq!(c.gasto().incerto, dec!(1.00));
        // 1.00 uncertain + 2.30 > 3.00: refused before sending.
        let e = c.car_completo(CODIGO_REAL).await.unwrap_err();
        assert!(matches!(e, Error::SpendLimit { .. }), "{e:?}");
        let r = c.settle_incertos().await.unwrap();
        assert_eq!(r.cobradas, 1);
        let g = c.gasto();
        assert_eq!((g.confirmado, g.incerto), (dec!(1.00), dec!(0)));
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(1.00));
    })
    .await;
}

#[tokio::test]
async fn a_402_in_the_middle_of_a_batch_stops_it_without_a_debit() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(2.50)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        let mut done = 0;
        let error = loop {
            match c.car(CODIGO_REAL).await {
                Ok(_) => done += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(done, 2);
        assert_eq!(error.code(), Some(ErrorCode::SaldoInsuficiente));
        let missing = c
            .falta(&error)
            .await
            .unwrap()
            .expect("a 402 has a shortfall");
        assert_eq!(missing.falta, dec!(0.50));
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!((state.saldo, state.debited), (dec!(0.50), dec!(2.00)));
    })
    .await;
}

#[tokio::test]
async fn the_waiter_sees_a_top_up_that_only_reconciliation_confirms() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(0)).create().await.unwrap();
        let c = srv
            .client_builder(&conta)
            .poll_interval_unchecked(Duration::from_millis(50))
            .build()
            .unwrap();
        let r = c.criar_recarga(&NovaRecarga::new(dec!(500))).await.unwrap();
        srv.pay(r.recarga_id).without_webhook().await.unwrap();
        let wait = {
            let c = c.clone();
            tokio::spawn(async move {
                c.wait_for_recarga(r.recarga_id, Duration::from_secs(30))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!wait.is_finished(), "still pending before the clock moves");
        srv.advance(Duration::from_secs(120)).await.unwrap();
        let st = wait.await.unwrap().unwrap();
        assert_eq!(st.status, RecargaStatus::Confirmado);
        assert_eq!(st.saldo_atual, dec!(500));
    })
    .await;
}
