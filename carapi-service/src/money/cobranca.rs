//! The charge plan: what a store writes for a charged lookup answered with 200, and for a
//! lookup recorded without a charge (contract, "Limits" and "Prices"; docs/dominio.md).
//!
//! [`plan_cobranca`] decides; the store reads [`CobrancaState`] in its transaction and
//! applies the [`CobrancaPlan`] (debit, history row, ledger row, counters, consolidation) in
//! the same transaction. Order of the checks, first refusal wins:
//! 1. daily limit of charged lookups reached (`cobradas_hoje >= limite_diario`): 429;
//! 2. the charge would pass the monthly spending cap (`gasto_mes + preco > limite_mensal`): 429;
//! 3. the balance does not cover the price (`saldo < preco`): 402;
//! 4. otherwise debit the price of the account's table (legacy or current).
//!
//! A refusal debits nothing and is recorded as a failed lookup; its `Retry-After` is the time
//! to the next Brasília midnight (daily) or month (monthly), rounded up. Sandbox lookups never
//! reach this plan: reserved sandbox values are answered before any charge and count toward no
//! limit (contract, "Sandbox").
//!
//! History order: a row's `data` is never earlier than the account's previous row
//! (`last_date`), so the newest-first order of the history and its timestamps agree even when
//! concurrent requests reach the store in another order than their clocks were read.

use carapi_sdk::EndpointConsulta;
use chrono::{DateTime, Utc};

use super::{Centavos, calendar, tarifa};

/// What the plan needs to know about an account, read in the charge's transaction.
///
/// A counter is read only when its limit is set ([`readings`]): with no daily limit
/// `cobradas_hoje` is not looked at, with no monthly cap `gasto_mes` is not looked at (the
/// store passes zero then).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CobrancaState {
    /// Balance, in centavos.
    pub(crate) saldo: Centavos,
    /// On the legacy price table.
    pub(crate) legado: bool,
    /// Daily limit of charged lookups; `None` = unlimited.
    pub(crate) limite_diario: Option<u32>,
    /// Monthly spending cap, in centavos; `None` = unlimited.
    pub(crate) limite_mensal: Option<Centavos>,
    /// Charged lookups on this Brasília day so far.
    pub(crate) cobradas_hoje: u64,
    /// Spent in this Brasília month so far, in centavos.
    pub(crate) gasto_mes: Centavos,
    /// `data` of the account's latest history row, if any.
    pub(crate) last_date: Option<DateTime<Utc>>,
    /// The looked-up CAR record had already been consolidated by an earlier charged lookup
    /// (the answer's `cache`); false for the owner lookup, which consolidates nothing.
    pub(crate) consolidated: bool,
}

/// Which counters a store must read for an account's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Readings {
    /// The Brasília day's charged lookups (only with a daily limit).
    pub(crate) cobradas_hoje: bool,
    /// The Brasília month's spending (only with a monthly cap).
    pub(crate) gasto_mes: bool,
}

/// The counters the limits `limite_diario` and `limite_mensal` need.
pub(crate) fn readings(limite_diario: Option<u32>, limite_mensal: Option<Centavos>) -> Readings {
    Readings {
        cobradas_hoje: limite_diario.is_some(),
        gasto_mes: limite_mensal.is_some(),
    }
}

/// Outcome of a charge as the store reports it to the handler. Every variant has been
/// recorded in the history, in the same transaction as the debit and the counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CobrancaResult {
    /// Debited.
    Cobrada {
        /// Price charged.
        valor: Centavos,
        /// Balance before.
        saldo_antes: Centavos,
        /// Balance after.
        saldo_depois: Centavos,
        /// The record had already been consolidated by an earlier lookup.
        cache: bool,
    },
    /// 402: the balance does not cover the price; nothing debited.
    SaldoInsuficiente {
        /// Balance.
        saldo: Centavos,
        /// Price.
        preco: Centavos,
    },
    /// 429: the daily limit of charged lookups is reached.
    LimiteDiario {
        /// The limit.
        limite: u32,
        /// `Retry-After`, seconds: to the next Brasília midnight, rounded up.
        retry_after: u64,
    },
    /// 429: the charge would pass the monthly spending ceiling.
    LimiteMensal {
        /// The ceiling.
        limite: Centavos,
        /// Spent this month.
        gasto: Centavos,
        /// `Retry-After`, seconds: to the first day of the next Brasília month, rounded up.
        retry_after: u64,
    },
}

impl CobrancaResult {
    /// HTTP status answered for this outcome (200, 402 or 429).
    pub(crate) fn status(&self) -> u16 {
        match self {
            CobrancaResult::Cobrada { .. } => 200,
            CobrancaResult::SaldoInsuficiente { .. } => 402,
            CobrancaResult::LimiteDiario { .. } | CobrancaResult::LimiteMensal { .. } => 429,
        }
    }
}

/// One history row (`GET /v1/historico`), as the plan fixes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HistoricoRow {
    /// HTTP status answered.
    pub(crate) status: u16,
    /// Amount charged (zero when not charged).
    pub(crate) valor: Centavos,
    /// Balance before (`None` for an account that does not exist).
    pub(crate) saldo_antes: Option<Centavos>,
    /// Balance after.
    pub(crate) saldo_depois: Option<Centavos>,
    /// The row's instant.
    pub(crate) data: DateTime<Utc>,
}

/// What one lookup adds to the Brasília day's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Counts as a charged lookup.
    pub(crate) cobrada: bool,
    /// Counts as an error (any status but 200).
    pub(crate) is_error: bool,
    /// Spent.
    pub(crate) gasto: Centavos,
}

/// Everything a store writes for one charged lookup, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CobrancaPlan {
    /// Subtract this from the balance (zero on a refusal or for a free endpoint); the store's
    /// `UPDATE` stays conditional on the balance covering it.
    pub(crate) debit: Centavos,
    /// The history row.
    pub(crate) historico: HistoricoRow,
    /// The ledger's debit row (`lancamentos`), when something is debited.
    pub(crate) ledger_entry: Option<Centavos>,
    /// The day's counters.
    pub(crate) counters: Counters,
    /// Mark the looked-up record consolidated (charged lookups only).
    pub(crate) consolidate: bool,
    /// The outcome the store hands back as it is, once applied: `cache` and `Retry-After`
    /// included.
    pub(crate) result: CobrancaResult,
}

/// The instant of a new history row at `em`: never before the account's latest row.
fn date_of_row(at: DateTime<Utc>, last: Option<DateTime<Utc>>) -> DateTime<Utc> {
    last.map_or(at, |u| u.max(at))
}

/// The decision on a charged lookup of `endpoint` at `em` for `estado` (see the module docs for
/// the order of the checks).
pub(crate) fn plan_cobranca(
    state: &CobrancaState,
    endpoint: EndpointConsulta,
    at: DateTime<Utc>,
) -> CobrancaPlan {
    let preco = tarifa::preco(state.legado, endpoint);
    let data = date_of_row(at, state.last_date);
    // The balance after the debit, when the balance covers the price.
    let depois = state
        .saldo
        .checked_sub(preco)
        .ok()
        .filter(|d| *d >= Centavos::ZERO);
    let refusal = if let Some(limite) = state.limite_diario
        && state.cobradas_hoje >= u64::from(limite)
    {
        Some(CobrancaResult::LimiteDiario {
            limite,
            retry_after: calendar::seconds_until_tomorrow(at),
        })
    } else if let Some(limite) = state.limite_mensal
        && !state
            .gasto_mes
            .checked_add(preco)
            .is_ok_and(|total| total <= limite)
    {
        let gasto = state.gasto_mes;
        Some(CobrancaResult::LimiteMensal {
            limite,
            gasto,
            retry_after: calendar::seconds_until_next_month(at),
        })
    } else if depois.is_none() {
        let saldo = state.saldo;
        Some(CobrancaResult::SaldoInsuficiente { saldo, preco })
    } else {
        None
    };
    let saldo = state.saldo;
    let (None, Some(depois)) = (&refusal, depois) else {
        let result = refusal.unwrap_or(CobrancaResult::SaldoInsuficiente { saldo, preco });
        return CobrancaPlan {
            debit: Centavos::ZERO,
            historico: HistoricoRow {
                status: result.status(),
                valor: Centavos::ZERO,
                saldo_antes: Some(saldo),
                saldo_depois: Some(saldo),
                data,
            },
            ledger_entry: None,
            counters: Counters {
                cobrada: false,
                is_error: true,
                gasto: Centavos::ZERO,
            },
            consolidate: false,
            result,
        };
    };
    CobrancaPlan {
        debit: preco,
        historico: HistoricoRow {
            status: 200,
            valor: preco,
            saldo_antes: Some(saldo),
            saldo_depois: Some(depois),
            data,
        },
        ledger_entry: (preco.0 > 0).then_some(preco),
        counters: Counters {
            cobrada: true,
            is_error: false,
            gasto: preco,
        },
        consolidate: true,
        result: CobrancaResult::Cobrada {
            valor: preco,
            saldo_antes: saldo,
            saldo_depois: depois,
            cache: state.consolidated,
        },
    }
}

/// The history row and counters of a lookup recorded without a charge (answered `status`
/// before any charge) at `em`, for an account whose balance is `saldo` (`None`: no such
/// account) and whose latest row is at `last_date`.
pub(crate) fn plan_record(
    saldo: Option<Centavos>,
    status: u16,
    at: DateTime<Utc>,
    last_date: Option<DateTime<Utc>>,
) -> (HistoricoRow, Counters) {
    (
        HistoricoRow {
            status,
            valor: Centavos::ZERO,
            saldo_antes: saldo,
            saldo_depois: saldo,
            data: date_of_row(at, last_date),
        },
        Counters {
            cobrada: false,
            is_error: status != 200,
            gasto: Centavos::ZERO,
        },
    )
}

#[cfg(test)]
#[path = "cobranca_cases.rs"]
mod cases;
