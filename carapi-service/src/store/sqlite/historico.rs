//! History and usage in O(page) plus an index seek, for every filter combination
//! (migrations 0012 and 0013; rules in [`crate::store::historico`]).
//!
//! A page is read in two steps in one statement: the ids of the page from the filter
//! combination's index (`INDEXED BY`), as the range of ordinals of the page (no rows are
//! skipped however deep the page), then the page's rows by primary key. Totals come from
//! `consultas_contagem`; `busca` reads a bounded window of the newest rows.

use carapi_sdk::{EndpointConsulta, StatusConsulta};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStore;
use super::rows::{instant, ms};
use crate::money::Centavos;
use crate::store::historico::{
    Part, Removidas, SEARCH_WINDOW, index_of, order_column, page_parts, page_range, utc_hour,
    without_nul,
};
use crate::store::{ContaId, HistoricoFilter, RecordedConsulta, StoreError, UsoEndpoint};

const COLUMNS: &str = "c.id, c.data_ms, c.endpoint, c.chave, c.status_http, c.cobrado, \
    c.valor_centavos, c.saldo_antes, c.saldo_depois";

/// `WHERE` of the filter's index (account, endpoint, status); parameters: account, then the
/// endpoint when filtered.
fn where_sql(f: &HistoricoFilter) -> String {
    let mut s = format!(
        " FROM consultas INDEXED BY {} WHERE conta_id = ?",
        index_of(f)
    );
    if f.endpoint.is_some() {
        s.push_str(" AND endpoint = ?");
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => s.push_str(" AND status_http = 200"),
        Some(StatusConsulta::Erro) => s.push_str(" AND status_http <> 200"),
        None => {}
    }
    s
}

/// The page statement without `busca` (`?` in order: account, endpoint?, the page's first and
/// last ordinals, [`page_range`]).
fn page_sql(f: &HistoricoFilter) -> String {
    format!(
        "SELECT {COLUMNS} FROM (SELECT id{} AND {} BETWEEN ? AND ?) AS p
         CROSS JOIN consultas AS c ON c.id = p.id",
        where_sql(f),
        order_column(f)
    )
}

/// The `busca` statement: in one pass over the window's ordinal range (the newest
/// [`SEARCH_WINDOW`] of the combination, by its index, in order), how many rows match and the
/// ids of the page's ones as a JSON array. `?` in order: the page's first and last positions
/// among the matches, account, endpoint?, the window's first and last ordinals, the key's
/// `LIKE` pattern, each matching endpoint ([`busca`]).
fn busca_sql(f: &HistoricoFilter, endpoints: usize) -> String {
    let order = order_column(f);
    let mut condicao = String::from("chave LIKE ? ESCAPE '\\'");
    if endpoints > 0 {
        let list = vec!["?"; endpoints].join(", ");
        condicao.push_str(&format!(" OR endpoint IN ({list})"));
    }
    format!(
        "SELECT COUNT(*), COALESCE(json_group_array(id) FILTER (WHERE n BETWEEN ? AND ?), '[]')
         FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY {order} DESC) AS n{}
               AND {order} BETWEEN ? AND ? AND ({condicao}))",
        where_sql(f)
    )
}

/// The page's rows by id (`?`: the ids as a JSON array; [`sorted`] puts them in order).
fn by_ids_sql() -> String {
    format!("SELECT {COLUMNS} FROM consultas AS c WHERE c.id IN (SELECT value FROM json_each(?))")
}

/// The total statement of a filter combination (`?`: account, endpoint?).
fn total_sql(f: &HistoricoFilter) -> String {
    let mut s = String::from(
        "SELECT COALESCE(SUM(quantidade), 0) FROM consultas_contagem WHERE conta_id = ?",
    );
    if f.endpoint.is_some() {
        s.push_str(" AND endpoint = ?");
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => s.push_str(" AND sucesso = 1"),
        Some(StatusConsulta::Erro) => s.push_str(" AND sucesso = 0"),
        None => {}
    }
    s
}

macro_rules! bind_filter {
    ($q:expr, $conta:expr, $f:expr) => {{
        let mut q = $q.bind($conta.0);
        if let Some(e) = $f.endpoint {
            q = q.bind(e.as_str());
        }
        q
    }};
}

pub(super) fn consulta_of(r: &SqliteRow) -> Result<(i64, RecordedConsulta), StoreError> {
    Ok((
        r.try_get("id")?,
        RecordedConsulta {
            at: instant(r.try_get("data_ms")?),
            endpoint: r.try_get("endpoint")?,
            chave: r.try_get("chave")?,
            status: r.try_get::<i64, _>("status_http")? as u16,
            cobrado: r.try_get::<i64, _>("cobrado")? != 0,
            valor: Centavos::new(r.try_get("valor_centavos")?),
            saldo_antes: r
                .try_get::<Option<i64>, _>("saldo_antes")?
                .map(Centavos::new),
            saldo_depois: r
                .try_get::<Option<i64>, _>("saldo_depois")?
                .map(Centavos::new),
        },
    ))
}

pub(super) async fn historico(
    store: &SqliteStore,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
    let sql = total_sql(f);
    let written: i64 = bind_filter!(sqlx::query_scalar(&sql), conta, f)
        .fetch_one(&store.historico)
        .await?;
    if let Some(b) = &f.busca {
        return historico_busca(store, conta, f, b, written.unsigned_abs()).await;
    }
    let r = removidas(store, conta, f).await?;
    let total = (written - r.erros).max(0).unsigned_abs();
    let mut rows = Vec::new();
    for (part, de, until) in page_parts(total, f.page, f.size, f.status, r) {
        let g = match part {
            Part::Own => f.clone(),
            Part::Successes => HistoricoFilter {
                status: Some(StatusConsulta::Sucesso),
                ..f.clone()
            },
        };
        let sql = page_sql(&g);
        let part = bind_filter!(sqlx::query(&sql), conta, g)
            .bind(de)
            .bind(until)
            .fetch_all(&store.historico)
            .await?;
        rows.extend(part);
    }
    Ok((sorted(&rows)?, total))
}

/// What the retention removed from the group of `f` ([`Removidas`]; nothing from the 200s).
async fn removidas(
    store: &SqliteStore,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<Removidas, StoreError> {
    if matches!(f.status, Some(StatusConsulta::Sucesso)) {
        return Ok(Removidas::default());
    }
    let r: Option<(i64, i64)> = sqlx::query_as(
        "SELECT removidas, sucessos_antes FROM consultas_removidas
         WHERE conta_id = ? AND endpoint = ?",
    )
    .bind(conta.0)
    .bind(f.endpoint.map_or("", |e| e.as_str()))
    .fetch_optional(&store.historico)
    .await?;
    Ok(
        r.map_or_else(Removidas::default, |(erros, successes_before)| Removidas {
            erros,
            successes_before,
        }),
    )
}

/// A `busca` page: the matches among the window of the combination's newest ordinals (of the
/// `total` rows ever recorded: [`busca`]), then the page's rows by id.
async fn historico_busca(
    store: &SqliteStore,
    conta: ContaId,
    f: &HistoricoFilter,
    text: &str,
    total: u64,
) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
    let Some((de, until)) = page_range(total, 1, SEARCH_WINDOW) else {
        return Ok((Vec::new(), 0));
    };
    let b = busca(text);
    let sql = busca_sql(f, b.endpoints.len());
    let start = i64::from(f.page.max(1) - 1) * i64::from(f.size);
    let mut q = sqlx::query_as::<_, (i64, String)>(&sql)
        .bind(start + 1)
        .bind(start + i64::from(f.size))
        .bind(conta.0);
    if let Some(e) = f.endpoint {
        q = q.bind(e.as_str());
    }
    q = q.bind(de).bind(until).bind(b.pattern);
    for e in b.endpoints {
        q = q.bind(e);
    }
    let (findings, ids) = q.fetch_one(&store.historico).await?;
    let rows = if ids == "[]" {
        Vec::new()
    } else {
        sqlx::query(&by_ids_sql())
            .bind(ids)
            .fetch_all(&store.historico)
            .await?
    };
    Ok((sorted(&rows)?, findings.unsigned_abs()))
}

/// What a `busca` matches (a substring of the key or of the endpoint, ASCII letters in any
/// case, as SQLite's `LIKE`): the key's `LIKE` pattern (`%`, `_` and `\` escaped) and the
/// registered endpoints that contain the text, found here rather than by a `LIKE` per row.
struct Busca {
    pattern: String,
    endpoints: Vec<&'static str>,
}

fn busca(text: &str) -> Busca {
    let text = without_nul(text);
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for ch in text.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(ch);
    }
    pattern.push('%');
    let target = text.to_ascii_uppercase();
    let endpoints = EndpointConsulta::ALL
        .iter()
        .map(|e| e.as_str())
        .filter(|e| e.to_ascii_uppercase().contains(&target))
        .collect();
    Busca { pattern, endpoints }
}

/// The rows, newest first.
fn sorted(rows: &[SqliteRow]) -> Result<Vec<RecordedConsulta>, StoreError> {
    let mut itens = rows
        .iter()
        .map(consulta_of)
        .collect::<Result<Vec<_>, _>>()?;
    itens.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    Ok(itens.into_iter().map(|(_, c)| c).collect())
}

/// `?`: account, hour, account, from, to.
const SQL_USO_HOURS: &str = "SELECT endpoint, quantidade, valor_centavos FROM consultas_uso_hora
     WHERE conta_id = ? AND hora > ?";
const SQL_USO_BOUNDARY: &str = "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0)
     FROM consultas INDEXED BY consultas_conta_data
     WHERE conta_id = ? AND data_ms >= ? AND data_ms < ? GROUP BY endpoint";

pub(super) async fn uso_by_endpoint(
    store: &SqliteStore,
    conta: ContaId,
    since: DateTime<Utc>,
) -> Result<Vec<UsoEndpoint>, StoreError> {
    let hour = utc_hour(since);
    let mut lines: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_HOURS)
        .bind(conta.0)
        .bind(hour)
        .fetch_all(&store.historico)
        .await?;
    let edge: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_BOUNDARY)
        .bind(conta.0)
        .bind(ms(since))
        .bind((hour + 1) * 3_600_000)
        .fetch_all(&store.historico)
        .await?;
    lines.extend(edge);
    Ok(crate::store::historico::add_uso(lines))
}

/// `EXPLAIN QUERY PLAN` of the total and page statements of `f` for `conta`, one line per
/// plan node (tests: every filter combination is served by an index).
///
/// # Errors
/// [`StoreError`] when the database fails.
pub(crate) async fn historico_plan(
    store: &SqliteStore,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<Vec<String>, StoreError> {
    let (sql, binds): (String, Vec<String>) = match &f.busca {
        Some(text) => {
            let b = busca(text);
            let mut binds = vec!["1".into(), f.size.to_string(), conta.0.to_string()];
            binds.extend(f.endpoint.map(|e| e.as_str().to_owned()));
            binds.extend(["1".into(), SEARCH_WINDOW.to_string(), b.pattern]);
            binds.extend(b.endpoints.iter().map(|e| (*e).to_owned()));
            (busca_sql(f, b.endpoints.len()), binds)
        }
        None => {
            let mut binds = vec![conta.0.to_string()];
            binds.extend(f.endpoint.map(|e| e.as_str().to_owned()));
            binds.extend(["1".into(), f.size.to_string()]);
            (page_sql(f), binds)
        }
    };
    let mut v = Vec::new();
    for (sql, binds) in [(total_sql(f), Vec::new()), (sql, binds)] {
        let sql = format!("EXPLAIN QUERY PLAN {sql}");
        let mut q = sqlx::query(&sql);
        if binds.is_empty() {
            q = bind_filter!(q, conta, f);
        }
        for b in binds {
            q = q.bind(b);
        }
        for r in q.fetch_all(&store.historico).await? {
            v.push(r.try_get::<String, _>("detail")?);
        }
    }
    Ok(v)
}

/// `EXPLAIN QUERY PLAN` of the usage statements.
///
/// # Errors
/// [`StoreError`] when the database fails.
pub(crate) async fn uso_plan(
    store: &SqliteStore,
    conta: ContaId,
    since: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    let mut v = Vec::new();
    let h = utc_hour(since);
    let hours = format!("EXPLAIN QUERY PLAN {SQL_USO_HOURS}");
    let q = sqlx::query(&hours).bind(conta.0).bind(h);
    for r in q.fetch_all(&store.historico).await? {
        v.push(r.try_get::<String, _>("detail")?);
    }
    let edge = format!("EXPLAIN QUERY PLAN {SQL_USO_BOUNDARY}");
    let q = sqlx::query(&edge)
        .bind(conta.0)
        .bind(ms(since))
        .bind((h + 1) * 3_600_000);
    for r in q.fetch_all(&store.historico).await? {
        v.push(r.try_get::<String, _>("detail")?);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_a_literal_substring_of_the_key_or_the_endpoint() {
        let b = busca("50%_a\\b");
        assert_eq!(b.pattern, "%50\\%\\_a\\\\b%");
        assert!(b.endpoints.is_empty());
        assert_eq!(busca("completo").endpoints, ["/v1/car/{codigo}/completo"]);
        assert_eq!(
            busca("CAR/").endpoints,
            [
                "/v1/car/{codigo}",
                "/v1/car/{codigo}/completo",
                "/v1/car/{codigo}/recibo"
            ]
        );
        assert_eq!(busca("_").endpoints, ["/v1/proprietario/{cpf_cnpj}"]);
        assert_eq!(busca("a\0").pattern, "%a\u{FFFD}%");
    }
}
