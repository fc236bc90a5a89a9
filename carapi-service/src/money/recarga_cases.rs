//! The tables of unit cases of the top-up plans.

use super::*;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn now() -> DateTime<Utc> {
    t("2026-05-04T15:00:00Z")
}

fn recarga(valor: i64, status: RecargaStatus, qr: &str, created_s_ago: i64) -> Recarga {
    let mut r = new_recarga(
        ContaId(1),
        Centavos::new(valor),
        format!("PIX{valor}-{created_s_ago}"),
        now() - Duration::seconds(created_s_ago),
    );
    r.status = status;
    r.qr_code = qr.into();
    r
}

#[test]
fn amounts_of_post_and_of_the_preview_follow_one_rule() {
    let d = |s: &str| s.parse::<Decimal>().unwrap();
    let post = [
        ("500", Ok(Centavos::new(50_000))),
        ("499.99", Err(ValorRefused::BelowMinimum)),
        ("0.01", Err(ValorRefused::BelowMinimum)),
        ("1000000", Ok(VALOR_MAXIMO)),
        ("1000000.01", Err(ValorRefused::Invalid)),
        ("0", Err(ValorRefused::Invalid)),
        ("-500", Err(ValorRefused::Invalid)),
        ("500.001", Err(ValorRefused::Invalid)),
        ("79228162514264337593543950335", Err(ValorRefused::Invalid)),
    ];
    for (v, expected) in post {
        assert_eq!(recarga_valor(d(v)), expected, "POST {v}");
    }
    let prev = |v: &str| {
        preview(d(v)).map(|p| (p.valor.0, p.percentual, p.bonus.0, p.total().unwrap().get()))
    };
    let cases = [
        ("2500", Ok((250_000, 8, 20_000, 270_000))),
        ("1000000", Ok((100_000_000, 10, 10_000_000, 110_000_000))),
        ("999999.999", Ok((100_000_000, 10, 10_000_000, 110_000_000))),
        ("1000000.01", Err(ValorRefused::Invalid)),
        ("79228162514264337593543950335", Err(ValorRefused::Invalid)),
        ("-3", Ok((-300, 0, 0, -300))),
        ("0.001", Ok((0, 0, 0, 0))),
        ("10.005", Ok((1000, 0, 0, 1000))),
        ("1000.33", Ok((100_033, 5, 5_001, 105_034))),
    ];
    for (v, expected) in cases {
        assert_eq!(prev(v), expected, "preview {v}");
    }
    // Every amount POST accepts previews to what its creation fixes.
    for v in ["500", "1000", "2499.99", "5000", "1000000"] {
        let c = recarga_valor(d(v)).unwrap();
        let p = preview(d(v)).unwrap();
        let n = new_recarga(ContaId(1), c, "P".into(), now());
        assert_eq!(
            (p.valor, p.percentual, p.bonus),
            (n.valor, n.percentual_bonus, n.bonus)
        );
    }
}

#[test]
fn reuse_decisions() {
    use RecargaStatus::{Confirmado, Pendente};
    let fresh = new_recarga(ContaId(1), Centavos::new(100_000), "NOVA".into(), now());
    let cases: Vec<(&str, Vec<Recarga>, Option<usize>)> = vec![
        ("nothing to reuse", vec![], None),
        (
            "pending, same amount, 1 min ago",
            vec![recarga(100_000, Pendente, "qr", 60)],
            Some(0),
        ),
        (
            "exactly 10 min ago",
            vec![recarga(100_000, Pendente, "qr", 600)],
            Some(0),
        ),
        (
            "10 min and 1 s ago",
            vec![recarga(100_000, Pendente, "qr", 601)],
            None,
        ),
        (
            "other amount",
            vec![recarga(100_001, Pendente, "qr", 60)],
            None,
        ),
        (
            "confirmed",
            vec![recarga(100_000, Confirmado, "qr", 60)],
            None,
        ),
        (
            "being created, 15 s ago",
            vec![recarga(100_000, Pendente, "", 15)],
            Some(0),
        ),
        (
            "being created, abandoned",
            vec![recarga(100_000, Pendente, "", 16)],
            None,
        ),
        (
            "the latest created wins",
            vec![
                recarga(100_000, Pendente, "a", 30),
                recarga(100_000, Pendente, "b", 90),
            ],
            Some(0),
        ),
        (
            "equal instants: the last inserted wins",
            vec![
                recarga(100_000, Pendente, "a", 30),
                recarga(100_000, Pendente, "b", 30),
            ],
            Some(1),
        ),
    ];
    for (name, candidates, expected) in cases {
        let r = reuse(&candidates, &fresh, since_reuse(now()))
            .map(|r| candidates.iter().position(|c| std::ptr::eq(c, r)).unwrap());
        assert_eq!(r, expected, "{name}");
    }
    // The read-only question never returns a row being created.
    let being_created = [recarga(100_000, Pendente, "", 1)];
    assert!(
        reusable(
            &being_created,
            Centavos::new(100_000),
            since_reuse(now()),
            None
        )
        .is_none()
    );
}

#[test]
fn confirmation_credits_a_pending_top_up_once() {
    use RecargaStatus::{Confirmado, Pendente, Rejeitado};
    let at = now();
    let pending = recarga(100_000, Pendente, "qr", 60);
    match plan_confirmation(Some(&pending), at).unwrap() {
        ConfirmationPlan::Credit {
            credit,
            legado_depois,
            recarga,
        } => {
            assert_eq!(credit, Centavos::new(105_000));
            assert!(!legado_depois);
            assert_eq!(
                (recarga.status, recarga.confirmed_at),
                (Confirmado, Some(at))
            );
            assert_eq!(recarga.id, pending.id);
        }
        other => panic!("{other:?}"),
    }
    for (name, r) in [
        ("confirmed", recarga(100_000, Confirmado, "qr", 60)),
        ("rejected", recarga(100_000, Rejeitado, "qr", 60)),
        ("being created", recarga(100_000, Pendente, "", 1)),
    ] {
        assert_eq!(
            plan_confirmation(Some(&r), at),
            Ok(ConfirmationPlan::AlreadyFinal(r.clone())),
            "{name}"
        );
    }
    assert_eq!(plan_confirmation(None, at), Ok(ConfirmationPlan::NotFound));
    let mut corrupt = recarga(100_000, Pendente, "qr", 60);
    corrupt.bonus = Centavos::new(i64::MAX);
    assert_eq!(
        plan_confirmation(Some(&corrupt), at),
        Err(Overflow),
        "an amount plus bonus out of range credits nothing"
    );
    assert_eq!(
        ConfirmationPlan::NotFound.confirmation(),
        Confirmation::NotFound
    );
}
