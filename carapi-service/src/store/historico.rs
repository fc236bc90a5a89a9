//! Rules shared by both stores' history and usage queries, so that one account's history,
//! however large, costs its page and an index seek (never a scan of the account's rows) and
//! both stores answer alike.
//!
//! - Each history row carries its ordinal (1 = oldest) in each of the four groups a filter
//!   combination selects: the account, the account and endpoint, the account and success (HTTP
//!   200 or not), the account, endpoint and success ([`order_column`]; migrations
//!   `0013_historico_ordem.sql`). Ordinals are dense: a store writes a row's ordinals as the
//!   group's count plus one, in the transaction that inserts it, with the account's rows
//!   serialised (SQLite's one writer; the account row lock on PostgreSQL).
//! - Each combination has its own index on its ordinal ([`indice`]), so page `p` of a
//!   combination with `total` rows is the ordinal range of [`page_range`]: an index range
//!   of `size` entries however deep the page (an `OFFSET` would step over every row before it).
//! - `total` is a sum over a few counter rows kept by a trigger (`consultas_contagem`,
//!   migrations `0012_historico_contagem.sql`: the rows ever recorded, so that the next row's
//!   ordinals are its counts plus one) less the error rows the retention deleted
//!   (`consultas_removidas`, migrations `0025_retencao.sql`; rules in
//!   [`crate::money::retencao`]). Deleted rows are always the group's oldest errors, so the
//!   rows left keep dense positions: [`page_parts`] maps a page to at most two ordinal ranges.
//!   A `busca` window is the newest [`SEARCH_WINDOW`] ordinals recorded, deleted ones included.
//! - `busca` (substring of the key or the endpoint, contract "GET /v1/historico") looks at the
//!   newest [`SEARCH_WINDOW`] requests matching the other filters: a bounded scan; its `total`
//!   counts the matches in that window.
//! - `GET /v1/uso` sums hourly counters (`consultas_uso_hora`) for the whole hours of the
//!   window and reads the rows of its first, partial hour by index ([`utc_hour`]).
//! - Text from the wire is stored and searched with NUL replaced ([`without_nul`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, Utc};

use super::{HistoricoFilter, UsoEndpoint};
use crate::money::Centavos;
pub(crate) use crate::money::retencao::Removidas;

/// Newest requests (matching the `endpoint` and `status` filters) that a `busca` looks at.
pub const SEARCH_WINDOW: u32 = 10_000;

/// The index serving the filter combination of `f` (same names in both stores).
pub(crate) fn index_of(f: &HistoricoFilter) -> &'static str {
    match (f.endpoint.is_some(), f.status) {
        (false, None) => "consultas_conta",
        (false, Some(StatusConsulta::Sucesso)) => "consultas_conta_sucesso",
        (false, Some(StatusConsulta::Erro)) => "consultas_conta_erro",
        (true, None) => "consultas_conta_endpoint",
        (true, Some(StatusConsulta::Sucesso)) => "consultas_conta_endpoint_sucesso",
        (true, Some(StatusConsulta::Erro)) => "consultas_conta_endpoint_erro",
    }
}

/// The ordinal column of the filter combination of `f`: the row's position (1 = oldest) among
/// the account's rows that the `endpoint` and `status` filters select.
pub(crate) fn order_column(f: &HistoricoFilter) -> &'static str {
    match (f.endpoint.is_some(), f.status.is_some()) {
        (false, false) => "ordem_conta",
        (true, false) => "ordem_endpoint",
        (false, true) => "ordem_status",
        (true, true) => "ordem_endpoint_status",
    }
}

/// The ordinals of page `page` (1-based; 0 is read as 1) of `size` rows, newest first, of a
/// group of `total` rows: `(from, to)`, both inclusive, `from >= 1`; `None` past the last page
/// or when `size` is 0.
pub(crate) fn page_range(total: u64, page: u32, size: u32) -> Option<(i64, i64)> {
    let total = i64::try_from(total).ok()?;
    let skipped = i64::from(page.max(1) - 1) * i64::from(size);
    let until = total - skipped;
    if size == 0 || until < 1 {
        return None;
    }
    Some(((until - i64::from(size) + 1).max(1), until))
}

/// Which ordinals a part of a page reads ([`page_parts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The filter combination's own ordinal column.
    Own,
    /// The success ordinals of the same endpoint filter (`status = 200`): the 200s older than
    /// the newest row the retention deleted.
    Successes,
}

/// The ordinal ranges of page `page` of `size` rows, newest first, of a filter combination
/// (status `status`) whose `total` rows are left after the retention removed `r` from its group
/// ([`Removidas`]; zero when nothing was removed, then one range: [`page_range`]). At most two
/// parts, the newer first, each `(part, from, to)` inclusive; empty past the last page.
pub(crate) fn page_parts(
    total: u64,
    page: u32,
    size: u32,
    status: Option<StatusConsulta>,
    r: Removidas,
) -> Vec<(Part, i64, i64)> {
    let Some((de, until)) = page_range(total, page, size) else {
        return Vec::new();
    };
    match status {
        Some(StatusConsulta::Sucesso) => vec![(Part::Own, de, until)],
        Some(StatusConsulta::Erro) => vec![(Part::Own, de + r.erros, until + r.erros)],
        None => {
            let s = r.successes_before;
            let mut parts = Vec::with_capacity(2);
            if until > s {
                parts.push((Part::Own, de.max(s + 1) + r.erros, until + r.erros));
            }
            if de <= s {
                parts.push((Part::Successes, de, until.min(s)));
            }
            parts
        }
    }
}

/// The UTC hour of `t`: whole hours since the Unix epoch (the key of `consultas_uso_hora`).
pub(crate) fn utc_hour(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis().div_euclid(3_600_000)
}

/// `s` with every NUL replaced by U+FFFD. PostgreSQL text cannot hold NUL; SQLite can: both
/// stores store and search this form, so the same input gets the same answer.
pub(crate) fn without_nul(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// [`without_nul`] of an optional text.
pub(crate) fn without_nul_opt(s: Option<&str>) -> Option<Cow<'_, str>> {
    s.map(without_nul)
}

/// Per-endpoint sums of (endpoint, lookups, centavos) rows, ordered by endpoint.
pub(crate) fn add_uso(lines: impl IntoIterator<Item = (String, i64, i64)>) -> Vec<UsoEndpoint> {
    let mut per: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (e, n, v) in lines {
        let s = per.entry(e).or_default();
        s.0 += n;
        s.1 += v;
    }
    per.into_iter()
        .filter(|(_, (n, _))| *n > 0)
        .map(|(endpoint, (n, v))| UsoEndpoint {
            endpoint,
            quantidade: n.unsigned_abs(),
            valor_total: Centavos::new(v),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_ordinal_ranges_newest_first() {
        assert_eq!(page_range(45, 1, 20), Some((26, 45)));
        assert_eq!(page_range(45, 0, 20), Some((26, 45)));
        assert_eq!(page_range(45, 2, 20), Some((6, 25)));
        assert_eq!(page_range(45, 3, 20), Some((1, 5)));
        assert_eq!(page_range(45, 4, 20), None);
        assert_eq!(page_range(0, 1, 20), None);
        assert_eq!(page_range(45, 1, 0), None);
        assert_eq!(page_range(1_000_000, 49_000, 20), Some((20_001, 20_020)));
        assert_eq!(page_range(10, u32::MAX, 100), None);
    }

    #[test]
    fn pages_after_the_retention_skip_the_deleted_errors() {
        let r = Removidas {
            erros: 3,
            successes_before: 4,
        };
        // 10 rows recorded, 3 old errors deleted: positions 1..=4 are the old 200s, 5..=7 the
        // account ordinals 8..=10.
        assert_eq!(
            page_parts(7, 1, 2, None, r),
            [(Part::Own, 9, 10)],
            "the newest"
        );
        assert_eq!(
            page_parts(7, 2, 2, None, r),
            [(Part::Own, 8, 8), (Part::Successes, 4, 4)]
        );
        assert_eq!(page_parts(7, 4, 2, None, r), [(Part::Successes, 1, 1)]);
        assert_eq!(page_parts(7, 5, 2, None, r), []);
        assert_eq!(
            page_parts(2, 1, 5, Some(StatusConsulta::Erro), r),
            [(Part::Own, 4, 5)]
        );
        assert_eq!(
            page_parts(4, 1, 5, Some(StatusConsulta::Sucesso), r),
            [(Part::Own, 1, 4)]
        );
        assert_eq!(
            page_parts(45, 2, 20, None, Removidas::default()),
            [(Part::Own, 6, 25)]
        );
    }

    #[test]
    fn nul_is_replaced_and_other_text_borrowed() {
        assert_eq!(without_nul("a\0b"), "a\u{FFFD}b");
        assert!(matches!(without_nul("ab"), Cow::Borrowed("ab")));
    }

    #[test]
    fn hours_are_floored_also_before_the_epoch() {
        let t = DateTime::from_timestamp_millis(3_600_000 * 5 + 1).unwrap();
        assert_eq!(utc_hour(t), 5);
        let t = DateTime::from_timestamp_millis(-1).unwrap();
        assert_eq!(utc_hour(t), -1);
    }

    #[test]
    fn usage_rows_are_summed_per_endpoint() {
        let u = add_uso([
            ("/b".to_owned(), 2, 10),
            ("/a".to_owned(), 1, 0),
            ("/b".to_owned(), 3, 5),
        ]);
        assert_eq!(u.len(), 2);
        assert_eq!((u[0].endpoint.as_str(), u[0].quantidade), ("/a", 1));
        assert_eq!((u[1].quantidade, u[1].valor_total), (5, Centavos::new(15)));
    }
}
