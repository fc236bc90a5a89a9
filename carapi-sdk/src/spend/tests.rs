use std::time::Duration;

use super::*;

fn guard(limite: Option<i64>) -> SpendGuard {
    SpendGuard::new(limite.map(|c| Decimal::new(c, 2)), DEFAULT_SETTLE_GRACE)
}

/// A reservation whose request left and whose answer was lost.
fn lost(mut r: Reservation) {
    r.about_to_send();
    r.lost();
}

/// A reservation whose request left and was answered 200.
fn answered_200(mut r: Reservation) {
    r.about_to_send();
    r.commit(None);
}

#[test]
fn lookups_answered_before_prices_are_priced_when_learned() {
    let g = guard(None);
    answered_200(g.unpriced(Op::CAR, "a"));
    answered_200(g.unpriced(Op::RECIBO, "b"));
    lost(g.unpriced(Op::PROPRIETARIO, "c"));
    drop(g.unpriced(Op::CAR_COMPLETO, "d")); // never sent: never counted
    assert_eq!(g.gasto().total(), Decimal::ZERO, "unknown prices");
    assert_eq!(g.gasto().nao_precificadas, 3);
    g.learn_prices(Precos::ATUAIS);
    let gasto = g.gasto();
    assert_eq!(gasto.confirmado, Decimal::new(1200, 2), "1.00 + 11.00");
    assert_eq!(gasto.incerto, Decimal::new(260, 2));
    assert_eq!(gasto.nao_precificadas, 0);
    g.learn_prices(Precos::LEGADOS);
    assert_eq!(g.gasto().confirmado, Decimal::new(1200, 2), "priced once");
    answered_200(g.unpriced(Op::CAR, "e"));
    assert_eq!(
        g.gasto().confirmado,
        Decimal::new(1250, 2),
        "answered once the prices are known: priced at once"
    );
}

#[tokio::test]
async fn reserve_commit_release_and_refusal_reports_spent_and_reserved_apart() {
    let g = guard(Some(300));
    let a = g.reserve(Op::CAR, "a", Decimal::ONE).await.unwrap();
    let b = g.reserve(Op::CAR, "b", Decimal::ONE).await.unwrap();
    answered_200(a);
    let e = g
        .reserve(Op::CAR, "c", Decimal::new(25, 1))
        .await
        .unwrap_err();
    match e {
        Error::SpendLimit {
            gasto, reservado, ..
        } => {
            assert_eq!(gasto, Decimal::ONE);
            assert_eq!(reservado, Decimal::ONE);
        }
        other => panic!("{other:?}"),
    }
    drop(b);
    lost(g.reserve(Op::CAR, "c", Decimal::ONE).await.unwrap());
    let gasto = g.gasto();
    assert_eq!(
        (gasto.confirmado, gasto.incerto),
        (Decimal::ONE, Decimal::ONE)
    );
    assert!(
        g.reserve(Op::CAR, "d", Decimal::new(101, 2)).await.is_err(),
        "incerto counts"
    );
    assert!(
        g.reserve(Op::CAR, "d", Decimal::ZERO).await.is_ok(),
        "a free lookup fits"
    );
}

#[test]
fn a_reservation_dropped_in_flight_is_uncertain_and_one_dropped_before_sending_is_released() {
    let g = guard(None);
    g.learn_prices(Precos::ATUAIS);
    let mut in_flight = g.unpriced(Op::CAR_COMPLETO, "a");
    in_flight.about_to_send();
    drop(in_flight); // the caller's future was dropped: a timeout, a select!
    let mut answered = g.unpriced(Op::CAR, "b");
    answered.about_to_send();
    answered.uncharged(); // a 404: known, not charged
    drop(answered);
    drop(g.unpriced(Op::CAR, "c")); // waiting for the limiter
    let gasto = g.gasto();
    assert_eq!(
        (gasto.confirmado, gasto.incerto),
        (Decimal::ZERO, Decimal::new(230, 2))
    );
    let (incertos, _) = g.to_settle();
    assert_eq!(incertos.len(), 1);
    assert_eq!(incertos[0].chave, "a");
}

#[tokio::test]
async fn a_capped_reservation_dropped_in_flight_keeps_counting_against_the_cap() {
    let g = guard(Some(150));
    let mut r = g.reserve(Op::CAR, "a", Decimal::ONE).await.unwrap();
    r.about_to_send();
    drop(r);
    assert!(
        matches!(
            g.reserve(Op::CAR, "b", Decimal::ONE).await,
            Err(Error::SpendLimit { .. })
        ),
        "1.00 possibly charged + 1.00 > 1.50"
    );
}

#[tokio::test(start_paused = true)]
async fn a_lookup_that_fits_once_reservations_settle_waits_for_them() {
    let g = Arc::new(guard(Some(300)));
    let in_flight = g.reserve(Op::CAR, "404", Decimal::new(3, 0)).await.unwrap();
    let g2 = g.clone();
    let waiter = tokio::spawn(async move { g2.reserve(Op::CAR, "a", Decimal::ONE).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!waiter.is_finished(), "waits while the 3.00 is in flight");
    drop(in_flight); // answered 404: released
    let r = waiter.await.unwrap().expect("fits after the release");
    answered_200(r);
    assert_eq!(g.gasto().confirmado, Decimal::ONE);
}

#[test]
fn settling_moves_or_drops() {
    let g = guard(None);
    lost(g.unpriced(Op::CAR, "a"));
    lost(g.unpriced(Op::CAR, "a"));
    let ids: Vec<u64> = g.to_settle().0.iter().map(|i| i.id).collect();
    assert_eq!(
        g.gasto().nao_precificadas,
        2,
        "lost before the prices were known"
    );
    g.learn_prices(Precos::ATUAIS);
    g.settle(&[(ids[0], Decimal::ONE)], &[ids[1]]);
    let gasto = g.gasto();
    assert_eq!(
        (gasto.confirmado, gasto.incerto),
        (Decimal::ONE, Decimal::ZERO)
    );
}

#[test]
fn a_200_is_remembered_with_its_server_time() {
    let g = guard(None);
    let now = chrono::Utc::now();
    g.observe(DatedAnswer {
        data: now,
        sent: None,
        received: Instant::now(),
    });
    let mut r = g.unpriced(Op::CAR, "a");
    r.about_to_send();
    r.commit(Some(now + chrono::TimeDelta::seconds(3)));
    let (_, answered) = g.to_settle();
    assert_eq!(answered.len(), 1);
    let j = answered[0].window;
    assert_eq!(j.not_before, Some(now));
    assert_eq!(j.not_after, Some(now + chrono::TimeDelta::seconds(4)));
}

/// A lookup sent before the prices were known and still in flight when they arrive (a caller
/// that left while its purchase goes on) counts at its price as uncertain, not as unpriced, and
/// leaves the sum when it ends.
#[test]
fn an_unpriced_lookup_in_flight_is_priced_when_the_prices_arrive() {
    let g = guard(None);
    let mut in_flight = g.unpriced(Op::CAR_COMPLETO, "a");
    in_flight.about_to_send();
    assert_eq!(g.gasto().nao_precificadas, 1);
    g.learn_prices(Precos::ATUAIS);
    let gasto = g.gasto();
    assert_eq!(
        (gasto.incerto, gasto.nao_precificadas),
        (Decimal::new(230, 2), 0)
    );
    in_flight.uncharged();
    drop(in_flight);
    let gasto = g.gasto();
    assert_eq!(
        (gasto.confirmado, gasto.incerto, gasto.nao_precificadas),
        (Decimal::ZERO, Decimal::ZERO, 0)
    );
}
