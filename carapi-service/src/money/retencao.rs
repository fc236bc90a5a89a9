//! The retention of uncharged error rows: which history rows a store may delete, and what it
//! writes so that every counter read from the history stays true.
//!
//! The contract lists every lookup in `GET /v1/historico`, charged or not; an uncharged error
//! (any status but 200: a 4xx or 5xx never debits) costs the account nothing and, kept forever,
//! grows the database without bound (a key at 10 requests/s writes about 200 MB a day of them).
//! So the operator sets a retention in days (`carapi-server serve --retencao-erros-dias`, never
//! under [`MIN_DAYS`]: `GET /v1/uso` and `usoHoje.erros` read 30 days) and the server deletes
//! the error rows older than it:
//!
//! - only rows with a status other than 200 and nothing charged: a charged row, a 200 (even one
//!   whose charge was reversed: its ledger credit names it) is never deleted;
//! - per account, the oldest first, as a prefix of the account's error rows in their order
//!   (`plan_retencao`): the first row younger than the cut (or charged, or out of order)
//!   stops the pass, so a row younger than the retention is never deleted and the rows left
//!   keep dense positions ([`Removidas`]: how a history page finds its rows after deletions);
//! - the hourly usage counters lose the deleted rows (amount zero: no amount changes); the
//!   ledger reads only charged rows and the daily limit counters only days, so `ledger check`,
//!   the balance, `/v1/uso`'s 30 days and `usoHoje` are unchanged.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::Centavos;

/// Fewest days of retention: `GET /v1/uso` reads the last 30 days (contract) and `usoHoje.erros`
/// today, so a shorter retention would change what they report.
pub const MIN_DAYS: u32 = 30;

/// Default retention of uncharged error rows, days.
pub const DEFAULT_DAYS: u32 = 90;

/// What the retention removed from one group of an account's history (the account as a whole,
/// or one endpoint of it), kept by the store per account and per endpoint.
///
/// The deleted rows are always the group's oldest error rows (a prefix of its error rows in
/// their order), so, with `erros` error rows deleted and `successes_before` 200s older than the
/// newest deleted row:
/// - the group's error row at position `p` (1 = oldest left) has error ordinal `p + erros`;
/// - in the whole group, positions `1..=sucessos_antes` are those 200s (success ordinals
///   `1..=sucessos_antes`), and position `p` above them has the group's ordinal `p + erros`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Removidas {
    /// Error rows deleted from the group.
    pub erros: i64,
    /// 200s of the group older than its newest deleted row (none of those were deleted).
    pub successes_before: i64,
}

/// One of an account's error rows as the store reads it for [`plan_retencao`] (in the order of
/// its error ordinal, from the first one not deleted yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorRow {
    /// Primary key.
    pub(crate) id: i64,
    /// Registered endpoint form.
    pub(crate) endpoint: String,
    /// HTTP status recorded.
    pub(crate) status: u16,
    /// Whether it is charged (never, for an error; checked anyway).
    pub(crate) cobrado: bool,
    /// Amount recorded.
    pub(crate) valor: Centavos,
    /// When it was recorded.
    pub(crate) data: DateTime<Utc>,
    /// Its ordinal among the account's rows.
    pub(crate) conta_ordinal: i64,
    /// Its ordinal among the account's rows of its endpoint.
    pub(crate) endpoint_ordinal: i64,
    /// Its ordinal among the account's error rows.
    pub(crate) error_ordinal: i64,
}

/// What a store writes to delete old error rows of one account, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetencaoPlan {
    /// The rows to delete.
    pub(crate) ids: Vec<i64>,
    /// The account's [`Removidas`] after the deletion.
    pub(crate) conta: Removidas,
    /// Each endpoint with deleted rows and its [`Removidas`] after the deletion.
    pub(crate) endpoints: BTreeMap<String, Removidas>,
    /// Rows deleted per (UTC hour, endpoint): the hourly usage counters drop by them.
    pub(crate) hours: BTreeMap<(i64, String), i64>,
}

/// The plan deleting, of one account, the error rows of `linhas` recorded before `antes`, as a
/// prefix: `linhas` are the account's error rows right after the ones already deleted, in
/// error-ordinal order; `conta` and `endpoints` what was removed so far. `None` when nothing is
/// to be deleted. The prefix stops at the first row recorded at or after `antes`, charged, with
/// status 200, or whose error ordinal does not follow the previous one's.
pub(crate) fn plan_retencao(
    lines: &[ErrorRow],
    antes: DateTime<Utc>,
    conta: Removidas,
    endpoints: &BTreeMap<String, Removidas>,
) -> Option<RetencaoPlan> {
    let mut plan = RetencaoPlan {
        ids: Vec::new(),
        conta,
        endpoints: BTreeMap::new(),
        hours: BTreeMap::new(),
    };
    let mut last_conta = None;
    let mut latest: BTreeMap<&str, i64> = BTreeMap::new();
    for l in lines {
        let next = l.error_ordinal == plan.conta.erros + 1;
        if l.data >= antes || l.cobrado || l.status == 200 || l.valor != Centavos::ZERO || !next {
            break;
        }
        plan.ids.push(l.id);
        plan.conta.erros += 1;
        last_conta = Some(l.conta_ordinal);
        latest.insert(&l.endpoint, l.endpoint_ordinal);
        let e = plan
            .endpoints
            .entry(l.endpoint.clone())
            .or_insert_with(|| endpoints.get(&l.endpoint).copied().unwrap_or_default());
        e.erros += 1;
        let hour = l.data.timestamp().div_euclid(3600);
        *plan.hours.entry((hour, l.endpoint.clone())).or_default() += 1;
    }
    let last = last_conta?;
    // The newest deleted row is the group's `erros`-th error: the rows older than it are the
    // `erros - 1` deleted errors and the 200s counted here.
    plan.conta.successes_before = last - plan.conta.erros;
    for (endpoint, r) in &mut plan.endpoints {
        r.successes_before = latest[endpoint.as_str()] - r.erros;
    }
    Some(plan)
}

/// What was removed from an account as its store keeps it, rows of (endpoint, error rows
/// deleted, 200s before the newest deleted row) with endpoint `""` for the whole account: the
/// account's [`Removidas`] and each endpoint's.
pub(crate) fn removidas_of(
    lines: Vec<(String, i64, i64)>,
) -> (Removidas, BTreeMap<String, Removidas>) {
    let mut per: BTreeMap<String, Removidas> = lines
        .into_iter()
        .map(|(e, erros, successes_before)| {
            (
                e,
                Removidas {
                    erros,
                    successes_before,
                },
            )
        })
        .collect();
    let conta = per.remove("").unwrap_or_default();
    (conta, per)
}

/// The instant before which error rows are deleted under a retention of `dias` days at `now`.
pub(crate) fn cut_of(now: DateTime<Utc>, dias: u32) -> DateTime<Utc> {
    now - chrono::Duration::days(i64::from(dias.max(MIN_DAYS)))
}

#[cfg(test)]
#[path = "retencao_cases.rs"]
mod cases;
