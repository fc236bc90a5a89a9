//! History and usage in O(page) plus an index seek, for every filter combination
//! (migrations 0012 and 0013; rules in [`crate::store::historico`]). One statement per filter
//! combination (no `$n IS NULL OR ...`), so that the planner can match the combination's
//! partial index even with a generic plan. Run on the store's history pool, whose statements
//! time out ([`super::HISTORY_TIMEOUT`]).

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use super::rows::corrupt;
use crate::money::Centavos;
use crate::store::historico::{
    Part, Removidas, SEARCH_WINDOW, add_uso, order_column, page_parts, utc_hour, without_nul,
};
use crate::store::{ContaId, HistoricoFilter, RecordedConsulta, StoreError, UsoEndpoint};

const COLUMNS: &str = "c.id, c.data, c.endpoint, c.chave, c.status_http, c.cobrado, \
    c.valor_centavos, c.saldo_antes, c.saldo_depois";

/// `FROM ... WHERE` of the filter combination: `$1` account, `$2` endpoint when filtered.
fn filter_sql(f: &HistoricoFilter) -> String {
    let mut s = String::from(" FROM consultas WHERE conta_id = $1");
    if f.endpoint.is_some() {
        s.push_str(" AND endpoint = $2");
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => s.push_str(" AND status_http = 200"),
        Some(StatusConsulta::Erro) => s.push_str(" AND status_http <> 200"),
        None => {}
    }
    s
}

/// [`filtro`] newest first: by the combination's ordinal, the last column of its index (the
/// equalities fix the others), so the index yields the order without a sort.
fn where_sql(f: &HistoricoFilter) -> String {
    format!("{} ORDER BY {} DESC", filter_sql(f), order_column(f))
}

/// Number of the first parameter after the filter's ones.
fn next_item(f: &HistoricoFilter) -> usize {
    2 + usize::from(f.endpoint.is_some())
}

fn param(n: usize) -> String {
    format!(
        "(strpos(upper(COALESCE(c.chave, '')), upper(${n})) > 0 OR strpos(upper(c.endpoint), upper(${n})) > 0)"
    )
}

/// The newest [`SEARCH_WINDOW`] rows of the filter, as `c`.
fn window_sql(f: &HistoricoFilter) -> String {
    format!("(SELECT *{} LIMIT {SEARCH_WINDOW}) AS c", where_sql(f))
}

/// Page statement: filter parameters, then busca, limit and offset with `busca`, or the
/// page's first and last ordinals without it (a part of `page_parts`). The page's ids come from
/// the index as an ordinal range (no rows skipped, however deep the page), then each row by
/// primary key (a `LATERAL ... LIMIT 1`, which the planner cannot turn into a hash join over
/// the table).
fn page_sql(f: &HistoricoFilter) -> String {
    let n = next_item(f);
    if f.busca.is_some() {
        format!(
            "SELECT {COLUMNS} FROM {} WHERE {} ORDER BY c.id DESC LIMIT ${} OFFSET ${}",
            window_sql(f),
            param(n),
            n + 1,
            n + 2
        )
    } else {
        format!(
            "SELECT {COLUMNS} FROM (SELECT id{} AND {} BETWEEN ${n} AND ${}) AS p
             CROSS JOIN LATERAL (SELECT * FROM consultas AS r WHERE r.id = p.id LIMIT 1) AS c
             ORDER BY c.id DESC",
            filter_sql(f),
            order_column(f),
            n + 1
        )
    }
}

/// Total statement: filter parameters, then busca?.
fn total_sql(f: &HistoricoFilter) -> String {
    if f.busca.is_some() {
        return format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            window_sql(f),
            param(next_item(f))
        );
    }
    let mut s = String::from(
        "SELECT COALESCE(SUM(quantidade), 0)::BIGINT FROM consultas_contagem WHERE conta_id = $1",
    );
    if f.endpoint.is_some() {
        s.push_str(" AND endpoint = $2");
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => s.push_str(" AND sucesso"),
        Some(StatusConsulta::Erro) => s.push_str(" AND NOT sucesso"),
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
        if let Some(b) = &$f.busca {
            q = q.bind(without_nul(b).into_owned());
        }
        q
    }};
}

pub(super) fn consulta_of(r: &PgRow) -> Result<RecordedConsulta, StoreError> {
    Ok(RecordedConsulta {
        at: r.try_get("data")?,
        endpoint: r.try_get("endpoint")?,
        chave: r.try_get("chave")?,
        status: u16::try_from(r.try_get::<i64, _>("status_http")?)
            .map_err(|_| corrupt("status HTTP"))?,
        cobrado: r.try_get("cobrado")?,
        valor: Centavos::new(r.try_get("valor_centavos")?),
        saldo_antes: r
            .try_get::<Option<i64>, _>("saldo_antes")?
            .map(Centavos::new),
        saldo_depois: r
            .try_get::<Option<i64>, _>("saldo_depois")?
            .map(Centavos::new),
    })
}

pub(super) async fn historico(
    pool: &PgPool,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
    let sql = total_sql(f);
    let total: i64 = bind_filter!(sqlx::query_scalar(&sql), conta, f)
        .fetch_one(pool)
        .await?;
    if f.busca.is_some() {
        let offset = i64::from(f.page.max(1) - 1) * i64::from(f.size);
        let sql = page_sql(f);
        let rows = bind_filter!(sqlx::query(&sql), conta, f)
            .bind(i64::from(f.size))
            .bind(offset)
            .fetch_all(pool)
            .await?;
        let itens = rows.iter().map(consulta_of).collect::<Result<_, _>>()?;
        return Ok((itens, total.unsigned_abs()));
    }
    // Without `busca` the counters give the rows ever recorded: less what the retention removed.
    let r = removidas(pool, conta, f).await?;
    let total = (total - r.erros).max(0).unsigned_abs();
    let mut itens = Vec::new();
    for (part, de, until) in page_parts(total, f.page, f.size, f.status, r) {
        let g = match part {
            Part::Own => f.clone(),
            Part::Successes => HistoricoFilter {
                status: Some(StatusConsulta::Sucesso),
                ..f.clone()
            },
        };
        let sql = page_sql(&g);
        let rows = bind_filter!(sqlx::query(&sql), conta, g)
            .bind(de)
            .bind(until)
            .fetch_all(pool)
            .await?;
        for row in &rows {
            itens.push(consulta_of(row)?);
        }
    }
    Ok((itens, total))
}

/// What the retention removed from the group of `f` ([`Removidas`]; nothing from the 200s).
async fn removidas(
    pool: &PgPool,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<Removidas, StoreError> {
    if matches!(f.status, Some(StatusConsulta::Sucesso)) {
        return Ok(Removidas::default());
    }
    let r: Option<(i64, i64)> = sqlx::query_as(
        "SELECT removidas, sucessos_antes FROM consultas_removidas
         WHERE conta_id = $1 AND endpoint = $2",
    )
    .bind(conta.0)
    .bind(f.endpoint.map_or("", |e| e.as_str()))
    .fetch_optional(pool)
    .await?;
    Ok(
        r.map_or_else(Removidas::default, |(erros, successes_before)| Removidas {
            erros,
            successes_before,
        }),
    )
}

const SQL_USO_HOURS: &str = "SELECT endpoint, quantidade, valor_centavos FROM consultas_uso_hora
     WHERE conta_id = $1 AND hora > $2";
const SQL_USO_BOUNDARY: &str = "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0)::BIGINT
     FROM consultas WHERE conta_id = $1 AND data >= $2 AND data < $3 GROUP BY endpoint";

fn end_of_hour(hour: i64) -> DateTime<Utc> {
    DateTime::from_timestamp((hour + 1) * 3600, 0).unwrap_or_default()
}

pub(super) async fn uso_by_endpoint(
    pool: &PgPool,
    conta: ContaId,
    since: DateTime<Utc>,
) -> Result<Vec<UsoEndpoint>, StoreError> {
    let hour = utc_hour(since);
    let mut lines: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_HOURS)
        .bind(conta.0)
        .bind(hour)
        .fetch_all(pool)
        .await?;
    let edge: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_BOUNDARY)
        .bind(conta.0)
        .bind(since)
        .bind(end_of_hour(hour))
        .fetch_all(pool)
        .await?;
    lines.extend(edge);
    Ok(add_uso(lines))
}

async fn explain<'q>(
    pool: &PgPool,
    q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
) -> Result<Vec<String>, StoreError> {
    let rows = q.fetch_all(pool).await?;
    rows.iter()
        .map(|r| Ok(r.try_get::<String, _>(0)?))
        .collect()
}

/// `EXPLAIN` of the total and page statements of `f` for `conta`, one line per plan line.
pub(super) async fn historico_plan(
    pool: &PgPool,
    conta: ContaId,
    f: &HistoricoFilter,
) -> Result<Vec<String>, StoreError> {
    let total = format!("EXPLAIN {}", total_sql(f));
    let mut v = explain(pool, bind_filter!(sqlx::query(&total), conta, f)).await?;
    let page = format!("EXPLAIN {}", page_sql(f));
    let q = bind_filter!(sqlx::query(&page), conta, f);
    let q = if f.busca.is_some() {
        q.bind(i64::from(f.size)).bind(0_i64)
    } else {
        q.bind(1_i64).bind(i64::from(f.size))
    };
    v.extend(explain(pool, q).await?);
    Ok(v)
}

/// `EXPLAIN` of the usage statements.
pub(super) async fn uso_plan(
    pool: &PgPool,
    conta: ContaId,
    since: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    let hour = utc_hour(since);
    let hours = format!("EXPLAIN {SQL_USO_HOURS}");
    let mut v = explain(pool, sqlx::query(&hours).bind(conta.0).bind(hour)).await?;
    let edge = format!("EXPLAIN {SQL_USO_BOUNDARY}");
    let q = sqlx::query(&edge)
        .bind(conta.0)
        .bind(since)
        .bind(end_of_hour(hour));
    v.extend(explain(pool, q).await?);
    Ok(v)
}
