//! The table of unit cases of [`super::plan_cobranca`] and [`super::plan_record`].

use super::*;

const COMPLETO: EndpointConsulta = EndpointConsulta::CarCompleto;

/// The `Retry-After` a refusal carries.
trait RetryAfterOf {
    fn retry_after_of(&self) -> Option<u64>;
}

impl RetryAfterOf for CobrancaResult {
    fn retry_after_of(&self) -> Option<u64> {
        match self {
            CobrancaResult::LimiteDiario { retry_after, .. }
            | CobrancaResult::LimiteMensal { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }
}

fn t(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// Noon in Brasília, far from any midnight.
fn midday() -> DateTime<Utc> {
    t("2026-05-04T15:00:00Z")
}

fn state_of(saldo: i64) -> CobrancaState {
    CobrancaState {
        saldo: Centavos::new(saldo),
        ..CobrancaState::default()
    }
}

fn debit(saldo: i64, preco: i64) -> CobrancaResult {
    CobrancaResult::Cobrada {
        valor: Centavos::new(preco),
        saldo_antes: Centavos::new(saldo),
        saldo_depois: Centavos::new(saldo - preco),
        cache: false,
    }
}

fn without_saldo(saldo: i64, preco: i64) -> CobrancaResult {
    CobrancaResult::SaldoInsuficiente {
        saldo: Centavos::new(saldo),
        preco: Centavos::new(preco),
    }
}

/// Seconds from [`midday`] to the next Brasília midnight.
const TO_MIDNIGHT: u64 = 12 * 3600;

fn diario(limite: u32) -> CobrancaResult {
    CobrancaResult::LimiteDiario {
        limite,
        retry_after: TO_MIDNIGHT,
    }
}

fn mensal(limite: i64, gasto: i64) -> CobrancaResult {
    CobrancaResult::LimiteMensal {
        limite: Centavos::new(limite),
        gasto: Centavos::new(gasto),
        // 2026-05-04 12:00 to 2026-06-01 00:00 in Brasília.
        retry_after: TO_MIDNIGHT + 27 * 86_400,
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one table of cases
fn table_of_cases() {
    let legado = |e: CobrancaState| CobrancaState { legado: true, ..e };
    let cases: Vec<(&str, CobrancaState, EndpointConsulta, CobrancaResult)> = vec![
        (
            "enough balance, current table",
            state_of(1000),
            COMPLETO,
            debit(1000, 230),
        ),
        (
            "legacy table",
            legado(state_of(1000)),
            COMPLETO,
            debit(1000, 150),
        ),
        (
            "legacy receipt",
            legado(state_of(1000)),
            EndpointConsulta::Recibo,
            debit(1000, 1000),
        ),
        (
            "current owner lookup",
            state_of(260),
            EndpointConsulta::Proprietario,
            debit(260, 260),
        ),
        (
            "basic lookup",
            state_of(100),
            EndpointConsulta::CarBasico,
            debit(100, 100),
        ),
        (
            "balance exactly the price",
            state_of(230),
            COMPLETO,
            debit(230, 230),
        ),
        (
            "one centavo short",
            state_of(229),
            COMPLETO,
            without_saldo(229, 230),
        ),
        ("zero balance", state_of(0), COMPLETO, without_saldo(0, 230)),
        (
            "legacy price above the balance",
            legado(state_of(900)),
            EndpointConsulta::Recibo,
            without_saldo(900, 1000),
        ),
        (
            "daily limit below count",
            CobrancaState {
                limite_diario: Some(3),
                cobradas_hoje: 2,
                ..state_of(1000)
            },
            COMPLETO,
            debit(1000, 230),
        ),
        (
            "daily limit reached",
            CobrancaState {
                limite_diario: Some(3),
                cobradas_hoje: 3,
                ..state_of(1000)
            },
            COMPLETO,
            diario(3),
        ),
        (
            "daily limit zero",
            CobrancaState {
                limite_diario: Some(0),
                ..state_of(1000)
            },
            COMPLETO,
            diario(0),
        ),
        (
            "counters ignored without limits",
            CobrancaState {
                cobradas_hoje: 1_000_000,
                gasto_mes: Centavos::new(1_000_000),
                ..state_of(1000)
            },
            COMPLETO,
            debit(1000, 230),
        ),
        (
            "monthly cap reached exactly",
            CobrancaState {
                limite_mensal: Some(Centavos::new(1000)),
                gasto_mes: Centavos::new(770),
                ..state_of(1000)
            },
            COMPLETO,
            debit(1000, 230),
        ),
        (
            "monthly cap passed by one centavo",
            CobrancaState {
                limite_mensal: Some(Centavos::new(1000)),
                gasto_mes: Centavos::new(771),
                ..state_of(1000)
            },
            COMPLETO,
            mensal(1000, 771),
        ),
        (
            "monthly cap uses the legacy price",
            legado(CobrancaState {
                limite_mensal: Some(Centavos::new(1000)),
                gasto_mes: Centavos::new(900),
                ..state_of(1000)
            }),
            COMPLETO,
            mensal(1000, 900),
        ),
        (
            "daily limit wins over monthly cap and balance",
            CobrancaState {
                limite_diario: Some(1),
                cobradas_hoje: 1,
                limite_mensal: Some(Centavos::new(0)),
                ..state_of(0)
            },
            COMPLETO,
            diario(1),
        ),
        (
            "monthly cap wins over balance",
            CobrancaState {
                limite_mensal: Some(Centavos::new(100)),
                ..state_of(0)
            },
            COMPLETO,
            mensal(100, 0),
        ),
    ];
    for (name, e, endpoint, expected) in cases {
        let p = plan_cobranca(&e, endpoint, midday());
        assert_eq!(p.result, expected, "{name}");
        let cobrada = matches!(expected, CobrancaResult::Cobrada { .. });
        let debit = match expected {
            CobrancaResult::Cobrada { valor, .. } => valor,
            _ => Centavos::ZERO,
        };
        assert_eq!(p.debit, debit, "{name}");
        assert_eq!(p.historico.status, expected.status(), "{name}");
        assert_eq!(p.historico.valor, debit, "{name}");
        assert_eq!(p.historico.saldo_antes, Some(e.saldo), "{name}");
        assert_eq!(
            p.historico.saldo_depois,
            Some(e.saldo.checked_sub(debit).unwrap()),
            "{name}"
        );
        assert_eq!(p.ledger_entry, cobrada.then_some(debit), "{name}");
        assert_eq!(
            p.counters,
            Counters {
                cobrada,
                is_error: !cobrada,
                gasto: debit
            },
            "{name}"
        );
        assert_eq!(p.consolidate, cobrada, "{name}");
        assert_eq!(
            p.result.retry_after_of().is_some(),
            expected.status() == 429,
            "{name}"
        );
    }
}

#[test]
fn the_plan_decides_cache_from_the_consolidation_it_read() {
    let fresh = plan_cobranca(&state_of(1000), COMPLETO, midday());
    assert!(matches!(
        fresh.result,
        CobrancaResult::Cobrada { cache: false, .. }
    ));
    let already = CobrancaState {
        consolidated: true,
        ..state_of(1000)
    };
    let p = plan_cobranca(&already, COMPLETO, midday());
    assert!(matches!(
        p.result,
        CobrancaResult::Cobrada { cache: true, .. }
    ));
    assert!(
        p.consolidate,
        "consolidating again is harmless and keeps one rule"
    );
}

#[test]
fn retry_after_is_rounded_up_to_brasilia_midnight_and_month() {
    // 5.47 s before Brasília midnight (03:00 UTC), on the last day of a month.
    let at = t("2026-05-01T02:59:54.530Z");
    let e = CobrancaState {
        limite_diario: Some(1),
        cobradas_hoje: 1,
        ..state_of(1000)
    };
    assert_eq!(
        plan_cobranca(&e, COMPLETO, at).result.retry_after_of(),
        Some(6)
    );
    let e = CobrancaState {
        limite_mensal: Some(Centavos::new(100)),
        ..state_of(1000)
    };
    assert_eq!(
        plan_cobranca(&e, COMPLETO, at).result.retry_after_of(),
        Some(6)
    );
    assert_eq!(
        plan_cobranca(&state_of(0), COMPLETO, at)
            .result
            .retry_after_of(),
        None
    );
}

#[test]
fn rows_never_go_back_in_time_and_cache_comes_from_the_state() {
    let antes = t("2026-05-04T15:00:00.100Z");
    let depois = t("2026-05-04T15:00:00.250Z");
    let e = CobrancaState {
        last_date: Some(depois),
        consolidated: true,
        ..state_of(1000)
    };
    let p = plan_cobranca(&e, COMPLETO, antes);
    assert_eq!(p.historico.data, depois);
    assert_eq!(
        p.result,
        CobrancaResult::Cobrada {
            valor: Centavos::new(230),
            saldo_antes: Centavos::new(1000),
            saldo_depois: Centavos::new(770),
            cache: true,
        }
    );
    let e = CobrancaState {
        last_date: Some(antes),
        ..state_of(1000)
    };
    assert_eq!(plan_cobranca(&e, COMPLETO, depois).historico.data, depois);
    let (line, counters) = plan_record(Some(Centavos::new(5)), 404, antes, Some(depois));
    assert_eq!(
        (
            line.status,
            line.valor,
            line.saldo_antes,
            line.saldo_depois,
            line.data
        ),
        (
            404,
            Centavos::ZERO,
            Some(Centavos::new(5)),
            Some(Centavos::new(5)),
            depois
        )
    );
    assert_eq!(
        counters,
        Counters {
            cobrada: false,
            is_error: true,
            gasto: Centavos::ZERO
        }
    );
    let (line, counters) = plan_record(None, 200, antes, None);
    assert_eq!(
        (line.saldo_antes, line.data, counters.is_error),
        (None, antes, false)
    );
}

#[test]
fn counters_needed_only_with_their_limit() {
    assert_eq!(
        readings(None, None),
        Readings {
            cobradas_hoje: false,
            gasto_mes: false
        }
    );
    assert_eq!(
        readings(Some(0), Some(Centavos::new(1))),
        Readings {
            cobradas_hoje: true,
            gasto_mes: true
        }
    );
}
