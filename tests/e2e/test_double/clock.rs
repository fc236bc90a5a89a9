//! One test per clock-driven rule: the PIX reuse window, the daily and monthly limits on the
//! Brasília calendar, reconciliation every 2 minutes, `uso`'s 30 days, timestamps.

use std::time::Duration;

use carapi_sdk::{ErrorCode, EscopoLimite, NovaRecarga, RecargaStatus, dec};
use carapi_service::money::calendar;
use carapi_test_double::TestServer;

use super::on_each_database;
use crate::{CODIGO_REAL, assert_api_error};

fn five_hundred() -> NovaRecarga {
    NovaRecarga::new(dec!(500))
}

/// Seconds from the server clock to one minute past the next Brasília midnight.
fn until_tomorrow(srv: &TestServer) -> Duration {
    Duration::from_secs(calendar::seconds_until_tomorrow(srv.clock().now()) + 60)
}

#[tokio::test]
async fn the_reuse_window_ends_after_ten_minutes() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        let first = c.criar_recarga(&five_hundred()).await.unwrap();
        srv.advance(Duration::from_secs(9 * 60)).await.unwrap();
        let again = c.criar_recarga(&five_hundred()).await.unwrap();
        assert!(again.reaproveitada, "within 10 minutes");
        assert_eq!(again.recarga_id, first.recarga_id);
        srv.advance(Duration::from_secs(2 * 60)).await.unwrap();
        let fresh = c.criar_recarga(&five_hundred()).await.unwrap();
        assert!(!fresh.reaproveitada, "11 minutes later");
        assert_ne!(fresh.recarga_id, first.recarga_id);
    })
    .await;
}

#[tokio::test]
async fn the_daily_limit_starts_over_after_midnight_in_brasilia() {
    on_each_database(|srv| async move {
        let conta = srv.conta().limite_diario(1).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        c.car(CODIGO_REAL).await.unwrap();
        let e = assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);
        assert_eq!(e.limite, Some(EscopoLimite::Diario));
        srv.advance(until_tomorrow(&srv)).await.unwrap();
        c.car(CODIGO_REAL).await.unwrap();
        assert_eq!(srv.conta_state(&conta).await.unwrap().debited, dec!(2.00));
    })
    .await;
}

#[tokio::test]
async fn the_monthly_limit_starts_over_next_month() {
    on_each_database(|srv| async move {
        let conta = srv
            .conta()
            .limite_mensal(dec!(1.00))
            .create()
            .await
            .unwrap();
        let c = srv.client(&conta).unwrap();
        c.car(CODIGO_REAL).await.unwrap();
        let e = assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);
        assert_eq!(e.limite, Some(EscopoLimite::Mensal));
        // Tomorrow is still this month (unless today is the last day): a day is not enough.
        let until_month_end = calendar::seconds_until_next_month(srv.clock().now());
        if until_month_end > 2 * 86_400 {
            srv.advance(until_tomorrow(&srv)).await.unwrap();
            assert_api_error(c.car(CODIGO_REAL).await, ErrorCode::LimiteExcedido);
        }
        let until_month_end = calendar::seconds_until_next_month(srv.clock().now());
        srv.advance(Duration::from_secs(until_month_end + 60))
            .await
            .unwrap();
        c.car(CODIGO_REAL).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn reconciliation_confirms_a_payment_without_webhook_when_two_minutes_pass() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(0)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        let r = c.criar_recarga(&five_hundred()).await.unwrap();
        srv.pay(r.recarga_id).without_webhook().await.unwrap();
        assert_eq!(
            c.recarga(r.recarga_id).await.unwrap().status,
            RecargaStatus::Pendente,
            "no webhook: pending until reconciliation"
        );
        let middle = srv.advance(Duration::from_secs(60)).await.unwrap();
        assert_eq!(middle.reconciled, 0, "one minute is not an interval");
        let step = srv.advance(Duration::from_secs(60)).await.unwrap();
        assert!(step.reconciled >= 1, "{step:?}");
        let st = c.recarga(r.recarga_id).await.unwrap();
        assert_eq!(st.status, RecargaStatus::Confirmado);
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!(state.saldo, dec!(500));
        assert!(state.ledger_consistent);
    })
    .await;
}

#[tokio::test]
async fn the_webhook_confirms_at_once() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(0)).create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        let r = c.criar_recarga(&five_hundred()).await.unwrap();
        srv.pay(r.recarga_id).await.unwrap();
        let st = c.recarga(r.recarga_id).await.unwrap();
        assert_eq!(st.status, RecargaStatus::Confirmado);
        assert_eq!(srv.conta_state(&conta).await.unwrap().saldo, dec!(500));
    })
    .await;
}

#[tokio::test]
async fn uso_counts_30_days_of_the_server_clock() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        c.car(CODIGO_REAL).await.unwrap();
        let total = |u: &carapi_sdk::UsoResponse| u.itens.iter().map(|i| i.quantidade).sum::<u64>();
        assert_eq!(total(&c.uso().await.unwrap()), 1);
        srv.advance(Duration::from_secs(29 * 86_400)).await.unwrap();
        assert_eq!(total(&c.uso().await.unwrap()), 1, "29 days later");
        srv.advance(Duration::from_secs(2 * 86_400)).await.unwrap();
        assert_eq!(total(&c.uso().await.unwrap()), 0, "31 days later");
    })
    .await;
}

#[tokio::test]
async fn history_and_top_ups_carry_the_server_clock() {
    on_each_database(|srv| async move {
        let conta = srv.conta().create().await.unwrap();
        let c = srv.client(&conta).unwrap();
        let one_week = Duration::from_secs(7 * 86_400);
        srv.advance(one_week).await.unwrap();
        let expected = srv.clock().now();
        c.car(CODIGO_REAL).await.unwrap();
        c.criar_recarga(&five_hundred()).await.unwrap();
        let h = c.historico(&Default::default()).await.unwrap();
        let data = h.itens[0].data.with_timezone(&chrono::Utc);
        assert!(
            (data - expected).num_seconds().abs() < 60,
            "{data} vs {expected}"
        );
        let recargas = c.recargas(&Default::default()).await.unwrap();
        let created = recargas.itens[0].data.with_timezone(&chrono::Utc);
        assert!(
            (created - expected).num_seconds().abs() < 60,
            "{created} vs {expected}"
        );
    })
    .await;
}
