//! The table of unit cases of [`super::planejar_cobranca`] and [`super::planejar_registro`].

use super::*;

const COMPLETO: EndpointConsulta = EndpointConsulta::CarCompleto;

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// Noon in Brasília, far from any midnight.
fn meio_dia() -> DateTime<Utc> {
    t("2026-05-04T15:00:00Z")
}

fn estado(saldo: i64) -> EstadoCobranca {
    EstadoCobranca {
        saldo: Centavos(saldo),
        ..EstadoCobranca::default()
    }
}

fn debitar(saldo: i64, preco: i64) -> ResultadoCobranca {
    ResultadoCobranca::Cobrada {
        valor: Centavos(preco),
        saldo_antes: Centavos(saldo),
        saldo_depois: Centavos(saldo - preco),
        cache: false,
    }
}

fn sem_saldo(saldo: i64, preco: i64) -> ResultadoCobranca {
    ResultadoCobranca::SaldoInsuficiente {
        saldo: Centavos(saldo),
        preco: Centavos(preco),
    }
}

fn diario(limite: u32) -> ResultadoCobranca {
    ResultadoCobranca::LimiteDiario { limite }
}

fn mensal(limite: i64, gasto: i64) -> ResultadoCobranca {
    ResultadoCobranca::LimiteMensal {
        limite: Centavos(limite),
        gasto: Centavos(gasto),
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one table of cases
fn table_of_cases() {
    let legado = |e: EstadoCobranca| EstadoCobranca { legado: true, ..e };
    let casos: Vec<(&str, EstadoCobranca, EndpointConsulta, ResultadoCobranca)> = vec![
        (
            "enough balance, current table",
            estado(1000),
            COMPLETO,
            debitar(1000, 230),
        ),
        (
            "legacy table",
            legado(estado(1000)),
            COMPLETO,
            debitar(1000, 150),
        ),
        (
            "legacy receipt",
            legado(estado(1000)),
            EndpointConsulta::Recibo,
            debitar(1000, 1000),
        ),
        (
            "current owner lookup",
            estado(260),
            EndpointConsulta::Proprietario,
            debitar(260, 260),
        ),
        (
            "basic lookup",
            estado(100),
            EndpointConsulta::CarBasico,
            debitar(100, 100),
        ),
        (
            "balance exactly the price",
            estado(230),
            COMPLETO,
            debitar(230, 230),
        ),
        (
            "one centavo short",
            estado(229),
            COMPLETO,
            sem_saldo(229, 230),
        ),
        ("zero balance", estado(0), COMPLETO, sem_saldo(0, 230)),
        (
            "legacy price above the balance",
            legado(estado(900)),
            EndpointConsulta::Recibo,
            sem_saldo(900, 1000),
        ),
        (
            "daily limit below count",
            EstadoCobranca {
                limite_diario: Some(3),
                cobradas_hoje: 2,
                ..estado(1000)
            },
            COMPLETO,
            debitar(1000, 230),
        ),
        (
            "daily limit reached",
            EstadoCobranca {
                limite_diario: Some(3),
                cobradas_hoje: 3,
                ..estado(1000)
            },
            COMPLETO,
            diario(3),
        ),
        (
            "daily limit zero",
            EstadoCobranca {
                limite_diario: Some(0),
                ..estado(1000)
            },
            COMPLETO,
            diario(0),
        ),
        (
            "counters ignored without limits",
            EstadoCobranca {
                cobradas_hoje: 1_000_000,
                gasto_mes: Centavos(1_000_000),
                ..estado(1000)
            },
            COMPLETO,
            debitar(1000, 230),
        ),
        (
            "monthly cap reached exactly",
            EstadoCobranca {
                limite_mensal: Some(Centavos(1000)),
                gasto_mes: Centavos(770),
                ..estado(1000)
            },
            COMPLETO,
            debitar(1000, 230),
        ),
        (
            "monthly cap passed by one centavo",
            EstadoCobranca {
                limite_mensal: Some(Centavos(1000)),
                gasto_mes: Centavos(771),
                ..estado(1000)
            },
            COMPLETO,
            mensal(1000, 771),
        ),
        (
            "monthly cap uses the legacy price",
            legado(EstadoCobranca {
                limite_mensal: Some(Centavos(1000)),
                gasto_mes: Centavos(900),
                ..estado(1000)
            }),
            COMPLETO,
            mensal(1000, 900),
        ),
        (
            "daily limit wins over monthly cap and balance",
            EstadoCobranca {
                limite_diario: Some(1),
                cobradas_hoje: 1,
                limite_mensal: Some(Centavos(0)),
                ..estado(0)
            },
            COMPLETO,
            diario(1),
        ),
        (
            "monthly cap wins over balance",
            EstadoCobranca {
                limite_mensal: Some(Centavos(100)),
                ..estado(0)
            },
            COMPLETO,
            mensal(100, 0),
        ),
    ];
    for (nome, e, endpoint, esperado) in casos {
        let p = planejar_cobranca(&e, endpoint, meio_dia());
        assert_eq!(p.resultado, esperado, "{nome}");
        let cobrada = matches!(esperado, ResultadoCobranca::Cobrada { .. });
        let debito = match esperado {
            ResultadoCobranca::Cobrada { valor, .. } => valor,
            _ => Centavos::ZERO,
        };
        assert_eq!(p.debito, debito, "{nome}");
        assert_eq!(p.historico.status, esperado.status(), "{nome}");
        assert_eq!(p.historico.valor, debito, "{nome}");
        assert_eq!(p.historico.saldo_antes, Some(e.saldo), "{nome}");
        assert_eq!(p.historico.saldo_depois, Some(e.saldo - debito), "{nome}");
        assert_eq!(p.lancamento, cobrada.then_some(debito), "{nome}");
        assert_eq!(
            p.contagem,
            Contagem {
                cobrada,
                erro: !cobrada,
                gasto: debito
            },
            "{nome}"
        );
        assert_eq!(p.consolidar, cobrada, "{nome}");
        assert_eq!(p.retry_after.is_some(), esperado.status() == 429, "{nome}");
    }
}

#[test]
fn retry_after_is_rounded_up_to_brasilia_midnight_and_month() {
    // 5.47 s before Brasília midnight (03:00 UTC), on the last day of a month.
    let em = t("2026-05-01T02:59:54.530Z");
    let e = EstadoCobranca {
        limite_diario: Some(1),
        cobradas_hoje: 1,
        ..estado(1000)
    };
    assert_eq!(planejar_cobranca(&e, COMPLETO, em).retry_after, Some(6));
    let e = EstadoCobranca {
        limite_mensal: Some(Centavos(100)),
        ..estado(1000)
    };
    assert_eq!(planejar_cobranca(&e, COMPLETO, em).retry_after, Some(6));
    assert_eq!(
        planejar_cobranca(&estado(0), COMPLETO, em).retry_after,
        None
    );
}

#[test]
fn rows_never_go_back_in_time_and_cache_comes_from_the_store() {
    let antes = t("2026-05-04T15:00:00.100Z");
    let depois = t("2026-05-04T15:00:00.250Z");
    let e = EstadoCobranca {
        ultima_data: Some(depois),
        ..estado(1000)
    };
    let p = planejar_cobranca(&e, COMPLETO, antes);
    assert_eq!(p.historico.data, depois);
    assert_eq!(
        p.resultado_com(true),
        ResultadoCobranca::Cobrada {
            valor: Centavos(230),
            saldo_antes: Centavos(1000),
            saldo_depois: Centavos(770),
            cache: true,
        }
    );
    let e = EstadoCobranca {
        ultima_data: Some(antes),
        ..estado(1000)
    };
    assert_eq!(
        planejar_cobranca(&e, COMPLETO, depois).historico.data,
        depois
    );
    let (linha, contagem) = planejar_registro(Some(Centavos(5)), 404, antes, Some(depois));
    assert_eq!(
        (
            linha.status,
            linha.valor,
            linha.saldo_antes,
            linha.saldo_depois,
            linha.data
        ),
        (
            404,
            Centavos::ZERO,
            Some(Centavos(5)),
            Some(Centavos(5)),
            depois
        )
    );
    assert_eq!(
        contagem,
        Contagem {
            cobrada: false,
            erro: true,
            gasto: Centavos::ZERO
        }
    );
    let (linha, contagem) = planejar_registro(None, 200, antes, None);
    assert_eq!(
        (linha.saldo_antes, linha.data, contagem.erro),
        (None, antes, false)
    );
}

#[test]
fn counters_needed_only_with_their_limit() {
    assert_eq!(
        leituras(None, None),
        Leituras {
            cobradas_hoje: false,
            gasto_mes: false
        }
    );
    assert_eq!(
        leituras(Some(0), Some(Centavos(1))),
        Leituras {
            cobradas_hoje: true,
            gasto_mes: true
        }
    );
}
