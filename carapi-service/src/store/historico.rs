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
//!   migrations `0012_historico_contagem.sql`).
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
    let pulados = i64::from(page.max(1) - 1) * i64::from(size);
    let ate = total - pulados;
    if size == 0 || ate < 1 {
        return None;
    }
    Some(((ate - i64::from(size) + 1).max(1), ate))
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
pub(crate) fn add_uso(linhas: impl IntoIterator<Item = (String, i64, i64)>) -> Vec<UsoEndpoint> {
    let mut por: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for (e, n, v) in linhas {
        let s = por.entry(e).or_default();
        s.0 += n;
        s.1 += v;
    }
    por.into_iter()
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
