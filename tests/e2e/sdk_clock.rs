//! `settle_incertos()` never compares the client's clock with the server's: it is right with
//! the test double's clock moved by hours (before and after the lost answers), and with the
//! server's clock minutes away from the client's (which is the client's clock being off).

use std::time::Duration;

use carapi_sdk::{Client, dec};
use carapi_test_double::{Fault, TestServer};
use chrono::Utc;

use crate::CODIGO_REAL;
use crate::test_double::on_each_database;

const SETTLE_GRACE: Duration = Duration::from_millis(300);

/// One lost charged answer (charged) and one reset before the handler (not charged), settled.
async fn lose_and_settle(srv: &TestServer, c: &Client, before_settling: Duration) {
    srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}"));
    assert!(c.car(CODIGO_REAL).await.unwrap_err().may_have_charged());
    srv.inject(Fault::ResetConnection.on("/v1/car/{codigoCar}/completo"));
    assert!(
        c.car_completo(CODIGO_REAL)
            .await
            .unwrap_err()
            .may_have_charged()
    );
    assert_eq!(c.gasto().incerto, dec!(3.30));
    if !before_settling.is_zero() {
        srv.advance(before_settling).await.unwrap();
    }
    tokio::time::sleep(SETTLE_GRACE * 2).await;
    let r = c.settle_incertos().await.unwrap();
    assert_eq!(
        (r.cobradas, r.nao_cobradas, r.pendentes),
        (1, 1, 0),
        "{r:?}"
    );
}

#[tokio::test]
async fn settling_is_right_with_the_double_clock_moved_by_hours() {
    on_each_database(|srv| async move {
        let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
        let c = srv
            .client_builder(&conta)
            .settle_grace(SETTLE_GRACE)
            .build()
            .unwrap();
        c.saldo().await.unwrap();
        // As a test of the daily limit would: hours ahead before the lookups...
        srv.advance(Duration::from_secs(5 * 3600)).await.unwrap();
        // ... and more hours before settling.
        lose_and_settle(&srv, &c, Duration::from_secs(3 * 3600)).await;
        let g = c.gasto();
        let state = srv.conta_state(&conta).await.unwrap();
        assert_eq!((g.confirmado, g.incerto), (state.debited, dec!(0)));
        assert_eq!(state.debited, dec!(1.00));

        // The server's `Date` is its clock's, not the system's.
        let r = reqwest::get(format!("{}/v1/saldo", srv.base_url()))
            .await
            .unwrap();
        let data = r.headers()[reqwest::header::DATE]
            .to_str()
            .unwrap()
            .to_owned();
        let data = chrono::DateTime::parse_from_rfc2822(&data).unwrap();
        let deviation = (data.with_timezone(&Utc) - srv.clock().now())
            .num_seconds()
            .abs();
        assert!(
            deviation <= 2,
            "Date {data} vs the double's clock {}",
            srv.clock().now()
        );
    })
    .await;
}

#[tokio::test]
async fn settling_is_right_with_the_client_clock_five_minutes_off_either_way() {
    for minutes in [-5i64, 5] {
        on_each_database(|srv| async move {
            // Before the client's first request: from the client's point of view its own clock
            // is five minutes ahead of (or behind) the server's.
            srv.clock()
                .set(Utc::now() + chrono::TimeDelta::minutes(minutes));
            let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
            let c = srv
                .client_builder(&conta)
                .settle_grace(SETTLE_GRACE)
                .build()
                .unwrap();
            lose_and_settle(&srv, &c, Duration::ZERO).await;
            let g = c.gasto();
            let debited = srv.conta_state(&conta).await.unwrap().debited;
            assert_eq!(
                (g.confirmado, g.incerto),
                (debited, dec!(0)),
                "{minutes} min"
            );
        })
        .await;
    }
}
