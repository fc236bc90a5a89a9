//! The charge rule: the one decision, shared by every store, of whether a lookup answered with
//! 200 is debited, and if not, why (contract, "Limits" and "Prices"; domain facts in
//! docs/dominio.md).
//!
//! The rule is a pure function of the account's state and counters read inside the store's
//! transaction ([`EstadoCobranca`]) and of the two price tables of the endpoint. The stores read
//! that state, call [`decidir`] and write what it says (the debit, or the refusal row); they
//! never decide anything themselves.
//!
//! Order of the checks, first refusal wins:
//! 1. daily limit of charged lookups reached (`cobradas_hoje >= limite_diario`): 429;
//! 2. the charge would pass the monthly spending cap (`gasto_mes + preco > limite_mensal`): 429;
//! 3. the balance does not cover the price (`saldo < preco`): 402;
//! 4. otherwise debit the price of the account's table (legacy or current).
//!
//! Sandbox lookups never reach this rule: reserved sandbox values are answered before any
//! charge and count toward no limit (contract, "Sandbox").

use crate::money::Centavos;
use crate::store::ResultadoCobranca;

/// What the rule needs to know about an account, read in the charge's transaction.
///
/// A counter is read only when its limit is set: with no daily limit `cobradas_hoje` is not
/// looked at, with no monthly cap `gasto_mes` is not looked at (a store may pass zero then).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EstadoCobranca {
    /// Balance, in centavos.
    pub saldo: Centavos,
    /// On the legacy price table.
    pub legado: bool,
    /// Daily limit of charged lookups; `None` = unlimited.
    pub limite_diario: Option<u32>,
    /// Monthly spending cap, in centavos; `None` = unlimited.
    pub limite_mensal: Option<Centavos>,
    /// Charged lookups on this Brasília day so far.
    pub cobradas_hoje: u64,
    /// Spent in this Brasília month so far, in centavos.
    pub gasto_mes: Centavos,
}

/// The price of one endpoint under both tables, in centavos; the account's flag picks one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Precos {
    /// Current table.
    pub atual: Centavos,
    /// Legacy table.
    pub legado: Centavos,
}

/// What the store must do with a charged lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decisao {
    /// Debit `preco` (may be zero for a free endpoint), answer 200.
    Debitar {
        /// Price under the account's table.
        preco: Centavos,
    },
    /// Debit nothing; record the lookup with `status` and answer `resultado`.
    Recusar {
        /// HTTP status of the refusal (402 or 429).
        status: u16,
        /// The refusal as the store reports it.
        resultado: ResultadoCobranca,
    },
}

/// Whether the daily counter must be read: only when the account has a daily limit.
pub fn precisa_cobradas_hoje(limite_diario: Option<u32>) -> bool {
    limite_diario.is_some()
}

/// Whether the month's spending must be read: only when the account has a monthly cap.
pub fn precisa_gasto_mes(limite_mensal: Option<Centavos>) -> bool {
    limite_mensal.is_some()
}

/// The charge decision for `estado` and the endpoint's `precos` (see the module docs for the
/// order of the checks).
pub fn decidir(estado: &EstadoCobranca, precos: Precos) -> Decisao {
    let preco = if estado.legado {
        precos.legado
    } else {
        precos.atual
    };
    let recusar = |status, resultado| Decisao::Recusar { status, resultado };
    if let Some(limite) = estado.limite_diario
        && estado.cobradas_hoje >= u64::from(limite)
    {
        return recusar(429, ResultadoCobranca::LimiteDiario { limite });
    }
    if let Some(limite) = estado.limite_mensal
        && estado.gasto_mes + preco > limite
    {
        let gasto = estado.gasto_mes;
        return recusar(429, ResultadoCobranca::LimiteMensal { limite, gasto });
    }
    if estado.saldo < preco {
        let saldo = estado.saldo;
        return recusar(402, ResultadoCobranca::SaldoInsuficiente { saldo, preco });
    }
    Decisao::Debitar { preco }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Precos = Precos {
        atual: Centavos(230),
        legado: Centavos(500),
    };

    fn estado(saldo: i64) -> EstadoCobranca {
        EstadoCobranca {
            saldo: Centavos(saldo),
            ..EstadoCobranca::default()
        }
    }

    fn debitar(p: i64) -> Decisao {
        Decisao::Debitar { preco: Centavos(p) }
    }

    fn sem_saldo(saldo: i64, preco: i64) -> Decisao {
        Decisao::Recusar {
            status: 402,
            resultado: ResultadoCobranca::SaldoInsuficiente {
                saldo: Centavos(saldo),
                preco: Centavos(preco),
            },
        }
    }

    fn diario(limite: u32) -> Decisao {
        Decisao::Recusar {
            status: 429,
            resultado: ResultadoCobranca::LimiteDiario { limite },
        }
    }

    fn mensal(limite: i64, gasto: i64) -> Decisao {
        Decisao::Recusar {
            status: 429,
            resultado: ResultadoCobranca::LimiteMensal {
                limite: Centavos(limite),
                gasto: Centavos(gasto),
            },
        }
    }

    #[test]
    fn table_of_cases() {
        let casos: Vec<(&str, EstadoCobranca, Precos, Decisao)> = vec![
            (
                "enough balance, current table",
                estado(1000),
                P,
                debitar(230),
            ),
            (
                "legacy table",
                EstadoCobranca {
                    legado: true,
                    ..estado(1000)
                },
                P,
                debitar(500),
            ),
            ("balance exactly the price", estado(230), P, debitar(230)),
            ("one centavo short", estado(229), P, sem_saldo(229, 230)),
            ("zero balance", estado(0), P, sem_saldo(0, 230)),
            (
                "legacy price above the balance",
                EstadoCobranca {
                    legado: true,
                    ..estado(300)
                },
                P,
                sem_saldo(300, 500),
            ),
            (
                "free endpoint with zero balance",
                estado(0),
                Precos {
                    atual: Centavos(0),
                    legado: Centavos(0),
                },
                debitar(0),
            ),
            (
                "daily limit below count",
                EstadoCobranca {
                    limite_diario: Some(3),
                    cobradas_hoje: 2,
                    ..estado(1000)
                },
                P,
                debitar(230),
            ),
            (
                "daily limit reached",
                EstadoCobranca {
                    limite_diario: Some(3),
                    cobradas_hoje: 3,
                    ..estado(1000)
                },
                P,
                diario(3),
            ),
            (
                "daily limit zero",
                EstadoCobranca {
                    limite_diario: Some(0),
                    ..estado(1000)
                },
                P,
                diario(0),
            ),
            (
                "counter ignored without a daily limit",
                EstadoCobranca {
                    cobradas_hoje: 1_000_000,
                    gasto_mes: Centavos(1_000_000),
                    ..estado(1000)
                },
                P,
                debitar(230),
            ),
            (
                "monthly cap reached exactly",
                EstadoCobranca {
                    limite_mensal: Some(Centavos(1000)),
                    gasto_mes: Centavos(770),
                    ..estado(1000)
                },
                P,
                debitar(230),
            ),
            (
                "monthly cap passed by one centavo",
                EstadoCobranca {
                    limite_mensal: Some(Centavos(1000)),
                    gasto_mes: Centavos(771),
                    ..estado(1000)
                },
                P,
                mensal(1000, 771),
            ),
            (
                "monthly cap uses the legacy price",
                EstadoCobranca {
                    legado: true,
                    limite_mensal: Some(Centavos(1000)),
                    gasto_mes: Centavos(600),
                    ..estado(1000)
                },
                P,
                mensal(1000, 600),
            ),
            (
                "daily limit wins over monthly cap and balance",
                EstadoCobranca {
                    limite_diario: Some(1),
                    cobradas_hoje: 1,
                    limite_mensal: Some(Centavos(0)),
                    ..estado(0)
                },
                P,
                diario(1),
            ),
            (
                "monthly cap wins over balance",
                EstadoCobranca {
                    limite_mensal: Some(Centavos(100)),
                    ..estado(0)
                },
                P,
                mensal(100, 0),
            ),
        ];
        for (nome, e, p, esperado) in casos {
            assert_eq!(decidir(&e, p), esperado, "{nome}");
        }
    }

    #[test]
    fn counters_needed_only_with_their_limit() {
        assert!(!precisa_cobradas_hoje(None));
        assert!(precisa_cobradas_hoje(Some(0)));
        assert!(!precisa_gasto_mes(None));
        assert!(precisa_gasto_mes(Some(Centavos(1))));
    }
}
