use chrono::TimeZone;

use super::*;

fn t(day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, day, 12, 0, 0).unwrap()
}

/// An error row: id, endpoint, day, ordinals (account, endpoint, errors).
fn error(id: i64, endpoint: &str, day: u32, orders: (i64, i64, i64)) -> ErrorRow {
    ErrorRow {
        id,
        endpoint: endpoint.to_owned(),
        status: 404,
        cobrado: false,
        valor: Centavos::ZERO,
        data: t(day),
        conta_ordinal: orders.0,
        endpoint_ordinal: orders.1,
        error_ordinal: orders.2,
    }
}

#[test]
fn old_errors_go_as_a_prefix_and_the_positions_are_counted() {
    // Account rows: 1 = 200 /a, 2 = err /a, 3 = 200 /b, 4 = err /b, 5 = err /a (young).
    let lines = [
        error(2, "/a", 1, (2, 2, 1)),
        error(4, "/b", 2, (4, 2, 2)),
        error(5, "/a", 20, (5, 3, 3)),
    ];
    let p = plan_retencao(&lines, t(10), Removidas::default(), &BTreeMap::new()).unwrap();
    assert_eq!(p.ids, [2, 4]);
    assert_eq!(
        p.conta,
        Removidas {
            erros: 2,
            successes_before: 2
        }
    );
    assert_eq!(
        p.endpoints["/a"],
        Removidas {
            erros: 1,
            successes_before: 1
        }
    );
    assert_eq!(
        p.endpoints["/b"],
        Removidas {
            erros: 1,
            successes_before: 1
        }
    );
    assert_eq!(p.hours.values().sum::<i64>(), 2);
}

#[test]
fn a_later_pass_adds_to_what_was_removed() {
    let antes = Removidas {
        erros: 2,
        successes_before: 2,
    };
    let mut per = BTreeMap::new();
    per.insert(
        "/a".to_owned(),
        Removidas {
            erros: 1,
            successes_before: 1,
        },
    );
    // Account rows 6 (200 /a) and 7 (err /a, endpoint row 5, error 3).
    let p = plan_retencao(&[error(7, "/a", 3, (7, 5, 3))], t(10), antes, &per).unwrap();
    assert_eq!(
        p.conta,
        Removidas {
            erros: 3,
            successes_before: 4
        }
    );
    assert_eq!(
        p.endpoints["/a"],
        Removidas {
            erros: 2,
            successes_before: 3
        }
    );
    assert!(!p.endpoints.contains_key("/b"));
}

#[test]
fn young_charged_200_or_out_of_order_rows_stop_the_pass() {
    let nothing = Removidas::default();
    let empty = BTreeMap::new();
    assert_eq!(
        plan_retencao(&[error(1, "/a", 20, (1, 1, 1))], t(10), nothing, &empty),
        None
    );
    let mut cobrada = error(1, "/a", 1, (1, 1, 1));
    cobrada.cobrado = true;
    assert_eq!(plan_retencao(&[cobrada], t(10), nothing, &empty), None);
    let mut ok = error(1, "/a", 1, (1, 1, 1));
    ok.status = 200;
    assert_eq!(plan_retencao(&[ok], t(10), nothing, &empty), None);
    let mut com_valor = error(1, "/a", 1, (1, 1, 1));
    com_valor.valor = Centavos::new(1);
    assert_eq!(plan_retencao(&[com_valor], t(10), nothing, &empty), None);
    assert_eq!(
        plan_retencao(&[error(9, "/a", 1, (9, 9, 2))], t(10), nothing, &empty),
        None,
        "error ordinal 2 does not follow 0 removed"
    );
    assert_eq!(plan_retencao(&[], t(10), nothing, &empty), None);
}

#[test]
fn the_cut_is_never_under_the_minimum() {
    assert_eq!(cut_of(t(31), 0), t(1));
    assert_eq!(cut_of(t(31), 30), t(1));
    assert_eq!(cut_of(t(31), 90), t(31) - chrono::Duration::days(90));
}
