//! The reversal plan: what a store writes for a charge whose answer was an error (its commit
//! reply was lost and its outcome could not be learned in time, so the client got 500 and the
//! request id went to the journal, `crate::store::journal`). The contract says a 5xx never
//! debits: a charge that did commit is reversed, once.
//!
//! [`plan_estorno`] decides from the charge's history row as read in the store's transaction;
//! the store applies the [`EstornoPlan`] in that same transaction: a compensating ledger credit
//! (`origem = 'estorno'`, the same amount as the debit), the balance credited back, the history
//! row kept but marked not charged (amount zero, balance after equal to the balance before), and
//! the counters of the row's Brasília day (charged lookups, spending) and UTC hour (amount)
//! lowered by the charge. The row's `cobrado` flag is the idempotency key: a row already marked
//! not charged plans nothing, so a reversal replayed after a crash does nothing more.

use chrono::{DateTime, NaiveDate, Utc};

use super::{Centavos, calendar};

/// A charge's history row as the reversal reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChargedRow {
    /// HTTP status recorded (200 for a charge that was debited).
    pub(crate) status: u16,
    /// Whether the row is charged.
    pub(crate) cobrado: bool,
    /// Amount charged.
    pub(crate) valor: Centavos,
    /// The row's instant.
    pub(crate) data: DateTime<Utc>,
}

/// What the store writes to reverse a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EstornoPlan {
    /// Credited back to the balance and written as the compensating ledger credit.
    pub(crate) credit: Centavos,
    /// The Brasília day whose counters (`cobradas` minus one, spending minus `credito`) change.
    pub(crate) day: NaiveDate,
    /// The UTC hour (Unix seconds / 3600) whose usage amount drops by `credito`.
    pub(crate) hour: i64,
}

/// What to do for a journaled charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EstornoDecision {
    /// The charge was not committed, or was recorded as a refusal: nothing was debited.
    NotCobrada,
    /// The charge was already reversed (or debited nothing): nothing more to do.
    AlreadyEstornada,
    /// Reverse it as the plan says.
    Estornar(EstornoPlan),
}

/// The reversal of the charge whose history row is `row` (`None`: not committed).
pub(crate) fn plan_estorno(row: Option<ChargedRow>) -> EstornoDecision {
    let Some(r) = row else {
        return EstornoDecision::NotCobrada;
    };
    if r.status != 200 {
        return EstornoDecision::NotCobrada;
    }
    if !r.cobrado || r.valor <= Centavos::ZERO {
        return EstornoDecision::AlreadyEstornada;
    }
    EstornoDecision::Estornar(EstornoPlan {
        credit: r.valor,
        day: calendar::brasilia_day(r.data),
        hour: r.data.timestamp().div_euclid(3600),
    })
}

#[cfg(test)]
#[path = "estorno_cases.rs"]
mod cases;
