//! Rules shared by both stores' history and usage queries, so that one account's history,
//! however large, costs its page and an index seek (never a scan of the account's rows) and
//! both stores answer alike.
//!
//! - Each combination of the `endpoint` and `status` filters has its own index in page order
//!   ([`indice`]; migrations `0011_historico_indices.sql`).
//! - `total` is a sum over a few counter rows kept by a trigger (`consultas_contagem`,
//!   migrations `0012_historico_contagem.sql`).
//! - `busca` (substring of the key or the endpoint, contract "GET /v1/historico") looks at the
//!   newest [`JANELA_BUSCA`] requests matching the other filters: a bounded scan; its `total`
//!   counts the matches in that window.
//! - `GET /v1/uso` sums hourly counters (`consultas_uso_hora`) for the whole hours of the
//!   window and reads the rows of its first, partial hour by index ([`hora_utc`]).
//! - Text from the wire is stored and searched with NUL replaced ([`sem_nul`]).

use std::borrow::Cow;
use std::collections::BTreeMap;

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, Utc};

use super::{FiltroHistorico, UsoEndpoint};
use crate::money::Centavos;

/// Newest requests (matching the `endpoint` and `status` filters) that a `busca` looks at.
pub const JANELA_BUSCA: u32 = 10_000;

/// The index serving the filter combination of `f` (same names in both stores).
pub fn indice(f: &FiltroHistorico) -> &'static str {
    match (f.endpoint.is_some(), f.status) {
        (false, None) => "consultas_conta",
        (false, Some(StatusConsulta::Sucesso)) => "consultas_conta_sucesso",
        (false, Some(StatusConsulta::Erro)) => "consultas_conta_erro",
        (true, None) => "consultas_conta_endpoint",
        (true, Some(StatusConsulta::Sucesso)) => "consultas_conta_endpoint_sucesso",
        (true, Some(StatusConsulta::Erro)) => "consultas_conta_endpoint_erro",
    }
}

/// The UTC hour of `t`: whole hours since the Unix epoch (the key of `consultas_uso_hora`).
pub fn hora_utc(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis().div_euclid(3_600_000)
}

/// `s` with every NUL replaced by U+FFFD. PostgreSQL text cannot hold NUL; SQLite can: both
/// stores store and search this form, so the same input gets the same answer.
pub fn sem_nul(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{FFFD}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// [`sem_nul`] of an optional text.
pub fn sem_nul_opt(s: Option<&str>) -> Option<Cow<'_, str>> {
    s.map(sem_nul)
}

/// Per-endpoint sums of (endpoint, lookups, centavos) rows, ordered by endpoint.
pub fn somar_uso(linhas: impl IntoIterator<Item = (String, i64, i64)>) -> Vec<UsoEndpoint> {
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
            valor_total: Centavos(v),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_replaced_and_other_text_borrowed() {
        assert_eq!(sem_nul("a\0b"), "a\u{FFFD}b");
        assert!(matches!(sem_nul("ab"), Cow::Borrowed("ab")));
    }

    #[test]
    fn hours_are_floored_also_before_the_epoch() {
        let t = DateTime::from_timestamp_millis(3_600_000 * 5 + 1).unwrap();
        assert_eq!(hora_utc(t), 5);
        let t = DateTime::from_timestamp_millis(-1).unwrap();
        assert_eq!(hora_utc(t), -1);
    }

    #[test]
    fn usage_rows_are_summed_per_endpoint() {
        let u = somar_uso([
            ("/b".to_owned(), 2, 10),
            ("/a".to_owned(), 1, 0),
            ("/b".to_owned(), 3, 5),
        ]);
        assert_eq!(u.len(), 2);
        assert_eq!((u[0].endpoint.as_str(), u[0].quantidade), ("/a", 1));
        assert_eq!((u[1].quantidade, u[1].valor_total), (5, Centavos(15)));
    }
}
