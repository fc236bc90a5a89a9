//! The table of unit cases of [`super::plan_estorno`].

use super::*;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn row(status: u16, cobrado: bool, valor: i64, data: &str) -> Option<ChargedRow> {
    Some(ChargedRow {
        status,
        cobrado,
        valor: Centavos::new(valor),
        data: t(data),
    })
}

fn estornar(valor: i64, day: &str, hour_of: &str) -> EstornoDecision {
    EstornoDecision::Estornar(EstornoPlan {
        credit: Centavos::new(valor),
        day: day.parse().unwrap(),
        hour: t(hour_of).timestamp() / 3600,
    })
}

#[test]
fn each_charge_row_gives_its_reversal() {
    let cases: [(&str, Option<ChargedRow>, EstornoDecision); 7] = [
        ("not committed", None, EstornoDecision::NotCobrada),
        (
            "committed charge: the price back, the row's day and hour",
            row(200, true, 100, "2026-05-04T15:30:00Z"),
            estornar(100, "2026-05-04", "2026-05-04T15:00:00Z"),
        ),
        (
            "after Brasília midnight in UTC but before it in Brasília: the Brasília day",
            row(200, true, 50, "2026-05-05T02:10:00Z"),
            estornar(50, "2026-05-04", "2026-05-05T02:00:00Z"),
        ),
        (
            "already reversed (the replay after a crash)",
            row(200, false, 0, "2026-05-04T15:30:00Z"),
            EstornoDecision::AlreadyEstornada,
        ),
        (
            "a 200 that debited nothing",
            row(200, true, 0, "2026-05-04T15:30:00Z"),
            EstornoDecision::AlreadyEstornada,
        ),
        (
            "a refusal recorded (402): nothing was debited",
            row(402, false, 0, "2026-05-04T15:30:00Z"),
            EstornoDecision::NotCobrada,
        ),
        (
            "a refusal recorded (429): nothing was debited",
            row(429, false, 0, "2026-05-04T15:30:00Z"),
            EstornoDecision::NotCobrada,
        ),
    ];
    for (name, r, expected) in cases {
        assert_eq!(plan_estorno(r), expected, "{name}");
    }
}
