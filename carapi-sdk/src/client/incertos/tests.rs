use chrono::TimeDelta;

use super::*;

const SETTLE_GRACE: Duration = Duration::from_secs(30);

/// A lookup's window: sent and ended at `mono`, at or after `not_before` in the server's time.
fn window(mono: Instant, not_before: DateTime<Utc>, not_after: Option<DateTime<Utc>>) -> Window {
    Window {
        sent: mono,
        ended: mono,
        not_before: Some(not_before),
        not_after,
    }
}

fn incerto(id: u64, mono: Instant, not_before: DateTime<Utc>) -> Incerto {
    Incerto {
        id,
        op: Op::CAR,
        chave: "k".into(),
        preco: Some(Decimal::ONE),
        window: window(mono, not_before, None),
        warning: None,
    }
}

fn item(at: DateTime<Utc>) -> ConsumoItem {
    ConsumoItem {
        data: at.fixed_offset(),
        endpoint: "/v1/car/{codigo}".into(),
        chave_consulta: Some("k".into()),
        status_http: 200,
        cobrado: true,
        valor_cobrado: Decimal::new(50, 2),
        saldo_antes: None,
        saldo_depois: None,
    }
}

#[test]
fn charged_not_charged_and_pending() {
    let s = TimeDelta::seconds;
    // The server's time is whatever it is: hours away from any client clock.
    let t0 = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    let earlier = Instant::now();
    let later = earlier + Duration::from_secs(120);
    // Lost and charged; lost with no item, the grace over; lost just now, no item yet.
    let group = vec![
        incerto(1, earlier, t0),
        incerto(2, earlier + Duration::from_secs(60), t0 + s(3600)),
        incerto(3, later, t0 + s(7200)),
    ];
    let c = classify(group, &[], &[item(t0 + s(1))], later, SETTLE_GRACE);
    assert_eq!(
        c.charged,
        vec![(1, Decimal::new(50, 2))],
        "the history's amount"
    );
    assert_eq!(c.not_charged, vec![2]);
    assert_eq!(c.pendentes, 1);
}

#[test]
fn a_known_200_of_the_same_key_is_not_the_lost_one() {
    let s = TimeDelta::seconds;
    let t0 = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    let mono = Instant::now();
    let late = mono + Duration::from_secs(600);
    // The client got a 200 for "k" (stamped t0 - 1) just before it lost an answer for "k".
    let known = Answered200 {
        op: Op::CAR,
        chave: "k".into(),
        window: window(mono, t0 - s(3), Some(t0)),
    };
    let c = classify(
        vec![incerto(1, mono, t0 - s(1))],
        std::slice::from_ref(&known),
        &[item(t0 - s(1))],
        late,
        SETTLE_GRACE,
    );
    assert_eq!(c.not_charged, vec![1], "the one item is the 200's");
    let c = classify(
        vec![incerto(1, mono, t0 - s(1))],
        std::slice::from_ref(&known),
        &[item(t0 - s(1)), item(t0 + s(1))],
        late,
        SETTLE_GRACE,
    );
    assert_eq!(c.charged.len(), 1);
    // Two lost answers, one charge: the earliest sent takes it.
    let c = classify(
        vec![
            incerto(2, mono + Duration::from_secs(3), t0),
            incerto(1, mono, t0),
        ],
        &[],
        &[item(t0 + s(1))],
        late,
        SETTLE_GRACE,
    );
    assert_eq!(c.charged[0].0, 1);
    assert_eq!(c.not_charged, vec![2]);
}

#[test]
fn an_item_before_the_last_answer_seen_is_not_the_lost_lookups() {
    let t0 = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    let mono = Instant::now();
    let c = classify(
        vec![incerto(1, mono, t0)],
        &[],
        &[item(t0 - TimeDelta::seconds(1))],
        mono + SETTLE_GRACE,
        SETTLE_GRACE,
    );
    assert_eq!(c.not_charged, vec![1], "someone else's earlier lookup");
}
