//! The tables of unit cases of the top-up plans.

use super::*;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn agora() -> DateTime<Utc> {
    t("2026-05-04T15:00:00Z")
}

fn recarga(valor: i64, status: RecargaStatus, qr: &str, criada_s_atras: i64) -> Recarga {
    let mut r = nova_recarga(
        ContaId(1),
        Centavos(valor),
        format!("PIX{valor}-{criada_s_atras}"),
        agora() - Duration::seconds(criada_s_atras),
    );
    r.status = status;
    r.qr_code = qr.into();
    r
}

#[test]
fn amounts_of_post_and_of_the_preview_follow_one_rule() {
    let d = |s: &str| s.parse::<Decimal>().unwrap();
    let post = [
        ("500", Ok(Centavos(50_000))),
        ("499.99", Err(ValorRecusado::AbaixoDoMinimo)),
        ("0.01", Err(ValorRecusado::AbaixoDoMinimo)),
        ("1000000", Ok(VALOR_MAXIMO)),
        ("1000000.01", Err(ValorRecusado::Invalido)),
        ("0", Err(ValorRecusado::Invalido)),
        ("-500", Err(ValorRecusado::Invalido)),
        ("500.001", Err(ValorRecusado::Invalido)),
        (
            "79228162514264337593543950335",
            Err(ValorRecusado::Invalido),
        ),
    ];
    for (v, esperado) in post {
        assert_eq!(valor_da_recarga(d(v)), esperado, "POST {v}");
    }
    let prev = |v: &str| preview(d(v)).map(|p| (p.valor.0, p.percentual, p.bonus.0, p.total().0));
    let casos = [
        ("2500", Ok((250_000, 8, 20_000, 270_000))),
        ("1000000", Ok((100_000_000, 10, 10_000_000, 110_000_000))),
        ("999999.999", Ok((100_000_000, 10, 10_000_000, 110_000_000))),
        ("1000000.01", Err(ValorRecusado::Invalido)),
        (
            "79228162514264337593543950335",
            Err(ValorRecusado::Invalido),
        ),
        ("-3", Ok((-300, 0, 0, -300))),
        ("0.001", Ok((0, 0, 0, 0))),
        ("10.005", Ok((1000, 0, 0, 1000))),
        ("1000.33", Ok((100_033, 5, 5_001, 105_034))),
    ];
    for (v, esperado) in casos {
        assert_eq!(prev(v), esperado, "preview {v}");
    }
    // Every amount POST accepts previews to what its creation fixes.
    for v in ["500", "1000", "2499.99", "5000", "1000000"] {
        let c = valor_da_recarga(d(v)).unwrap();
        let p = preview(d(v)).unwrap();
        let n = nova_recarga(ContaId(1), c, "P".into(), agora());
        assert_eq!(
            (p.valor, p.percentual, p.bonus),
            (n.valor, n.percentual_bonus, n.bonus)
        );
    }
}

#[test]
fn reuse_decisions() {
    use RecargaStatus::{Confirmado, Pendente};
    let nova = nova_recarga(ContaId(1), Centavos(100_000), "NOVA".into(), agora());
    let casos: Vec<(&str, Vec<Recarga>, Option<usize>)> = vec![
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
    for (nome, candidatas, esperado) in casos {
        let r = reuso(&candidatas, &nova, desde_reuso(agora()))
            .map(|r| candidatas.iter().position(|c| std::ptr::eq(c, r)).unwrap());
        assert_eq!(r, esperado, "{nome}");
    }
    // The read-only question never returns a row being created.
    let sendo_criada = [recarga(100_000, Pendente, "", 1)];
    assert!(reaproveitavel(&sendo_criada, Centavos(100_000), desde_reuso(agora()), None).is_none());
}

#[test]
fn confirmation_credits_a_pending_top_up_once() {
    use RecargaStatus::{Confirmado, Pendente, Rejeitado};
    let em = agora();
    let pendente = recarga(100_000, Pendente, "qr", 60);
    match planejar_confirmacao(Some(&pendente), em) {
        PlanoConfirmacao::Creditar {
            credito,
            legado_depois,
            recarga,
        } => {
            assert_eq!(credito, Centavos(105_000));
            assert!(!legado_depois);
            assert_eq!(
                (recarga.status, recarga.confirmada_em),
                (Confirmado, Some(em))
            );
            assert_eq!(recarga.id, pendente.id);
        }
        outro => panic!("{outro:?}"),
    }
    for (nome, r) in [
        ("confirmed", recarga(100_000, Confirmado, "qr", 60)),
        ("rejected", recarga(100_000, Rejeitado, "qr", 60)),
        ("being created", recarga(100_000, Pendente, "", 1)),
    ] {
        assert_eq!(
            planejar_confirmacao(Some(&r), em),
            PlanoConfirmacao::JaFinal(r.clone()),
            "{nome}"
        );
    }
    assert_eq!(
        planejar_confirmacao(None, em),
        PlanoConfirmacao::NaoEncontrada
    );
    assert_eq!(
        PlanoConfirmacao::NaoEncontrada.confirmacao(),
        Confirmacao::NaoEncontrada
    );
}
