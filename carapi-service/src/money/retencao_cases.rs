use chrono::TimeZone;

use super::*;

fn t(dia: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, dia, 12, 0, 0).unwrap()
}

/// An error row: id, endpoint, day, ordinals (account, endpoint, errors).
fn erro(id: i64, endpoint: &str, dia: u32, ordens: (i64, i64, i64)) -> ErrorRow {
    ErrorRow {
        id,
        endpoint: endpoint.to_owned(),
        status: 404,
        cobrado: false,
        valor: Centavos::ZERO,
        data: t(dia),
        account_ordinal: ordens.0,
        endpoint_ordinal: ordens.1,
        error_ordinal: ordens.2,
    }
}

#[test]
fn old_errors_go_as_a_prefix_and_the_positions_are_counted() {
    // Account rows: 1 = 200 /a, 2 = err /a, 3 = 200 /b, 4 = err /b, 5 = err /a (young).
    let linhas = [
        erro(2, "/a", 1, (2, 2, 1)),
        erro(4, "/b", 2, (4, 2, 2)),
        erro(5, "/a", 20, (5, 3, 3)),
    ];
    let p = plan_retencao(&linhas, t(10), Removidas::default(), &BTreeMap::new()).unwrap();
    assert_eq!(p.ids, [2, 4]);
    assert_eq!(
        p.conta,
        Removidas {
            erros: 2,
            sucessos_antes: 2
        }
    );
    assert_eq!(
        p.endpoints["/a"],
        Removidas {
            erros: 1,
            sucessos_antes: 1
        }
    );
    assert_eq!(
        p.endpoints["/b"],
        Removidas {
            erros: 1,
            sucessos_antes: 1
        }
    );
    assert_eq!(p.horas.values().sum::<i64>(), 2);
}

#[test]
fn a_later_pass_adds_to_what_was_removed() {
    let antes = Removidas {
        erros: 2,
        sucessos_antes: 2,
    };
    let mut por = BTreeMap::new();
    por.insert(
        "/a".to_owned(),
        Removidas {
            erros: 1,
            sucessos_antes: 1,
        },
    );
    // Account rows 6 (200 /a) and 7 (err /a, endpoint row 5, error 3).
    let p = plan_retencao(&[erro(7, "/a", 3, (7, 5, 3))], t(10), antes, &por).unwrap();
    assert_eq!(
        p.conta,
        Removidas {
            erros: 3,
            sucessos_antes: 4
        }
    );
    assert_eq!(
        p.endpoints["/a"],
        Removidas {
            erros: 2,
            sucessos_antes: 3
        }
    );
    assert!(!p.endpoints.contains_key("/b"));
}

#[test]
fn young_charged_200_or_out_of_order_rows_stop_the_pass() {
    let nada = Removidas::default();
    let vazio = BTreeMap::new();
    assert_eq!(
        plan_retencao(&[erro(1, "/a", 20, (1, 1, 1))], t(10), nada, &vazio),
        None
    );
    let mut cobrada = erro(1, "/a", 1, (1, 1, 1));
    cobrada.cobrado = true;
    assert_eq!(plan_retencao(&[cobrada], t(10), nada, &vazio), None);
    let mut ok = erro(1, "/a", 1, (1, 1, 1));
    ok.status = 200;
    assert_eq!(plan_retencao(&[ok], t(10), nada, &vazio), None);
    let mut com_valor = erro(1, "/a", 1, (1, 1, 1));
    com_valor.valor = Centavos::new(1);
    assert_eq!(plan_retencao(&[com_valor], t(10), nada, &vazio), None);
    assert_eq!(
        plan_retencao(&[erro(9, "/a", 1, (9, 9, 2))], t(10), nada, &vazio),
        None,
        "error ordinal 2 does not follow 0 removed"
    );
    assert_eq!(plan_retencao(&[], t(10), nada, &vazio), None);
}

#[test]
fn the_cut_is_never_under_the_minimum() {
    assert_eq!(cut_of(t(31), 0), t(1));
    assert_eq!(cut_of(t(31), 30), t(1));
    assert_eq!(cut_of(t(31), 90), t(31) - chrono::Duration::days(90));
}
