//! History and usage in O(page) plus an index seek, for every filter combination
//! (migrations 0012 and 0013; rules in [`crate::store::historico`]). One statement per filter
//! combination (no `$n IS NULL OR ...`), so that the planner can match the combination's
//! partial index even with a generic plan. Run on the store's history pool, whose statements
//! time out ([`super::TEMPO_HISTORICO`]).

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row};

use super::linhas::corrupt;
use crate::money::Centavos;
use crate::store::historico::{
    JANELA_BUSCA, coluna_ordem, faixa_da_pagina, hora_utc, sem_nul, somar_uso,
};
use crate::store::{ConsultaRegistrada, ContaId, FiltroHistorico, StoreError, UsoEndpoint};

const COLUNAS: &str = "c.id, c.data, c.endpoint, c.chave, c.status_http, c.cobrado, \
    c.valor_centavos, c.saldo_antes, c.saldo_depois";

/// `FROM ... WHERE` of the filter combination: `$1` account, `$2` endpoint when filtered.
fn filtro(f: &FiltroHistorico) -> String {
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
fn onde(f: &FiltroHistorico) -> String {
    format!("{} ORDER BY {} DESC", filtro(f), coluna_ordem(f))
}

/// Number of the first parameter after the filter's ones.
fn proximo(f: &FiltroHistorico) -> usize {
    2 + usize::from(f.endpoint.is_some())
}

fn casa(n: usize) -> String {
    format!(
        "(strpos(upper(COALESCE(c.chave, '')), upper(${n})) > 0 OR strpos(upper(c.endpoint), upper(${n})) > 0)"
    )
}

/// The newest [`JANELA_BUSCA`] rows of the filter, as `c`.
fn janela(f: &FiltroHistorico) -> String {
    format!("(SELECT *{} LIMIT {JANELA_BUSCA}) AS c", onde(f))
}

/// Page statement: filter parameters, then busca, limit and offset with `busca`, or the
/// page's first and last ordinals without it ([`faixa_da_pagina`]). The page's ids come from
/// the index as an ordinal range (no rows skipped, however deep the page), then each row by
/// primary key (a `LATERAL ... LIMIT 1`, which the planner cannot turn into a hash join over
/// the table).
fn sql_pagina(f: &FiltroHistorico) -> String {
    let n = proximo(f);
    if f.busca.is_some() {
        format!(
            "SELECT {COLUNAS} FROM {} WHERE {} ORDER BY c.id DESC LIMIT ${} OFFSET ${}",
            janela(f),
            casa(n),
            n + 1,
            n + 2
        )
    } else {
        format!(
            "SELECT {COLUNAS} FROM (SELECT id{} AND {} BETWEEN ${n} AND ${}) AS p
             CROSS JOIN LATERAL (SELECT * FROM consultas AS r WHERE r.id = p.id LIMIT 1) AS c
             ORDER BY c.id DESC",
            filtro(f),
            coluna_ordem(f),
            n + 1
        )
    }
}

/// Total statement: filter parameters, then busca?.
fn sql_total(f: &FiltroHistorico) -> String {
    if f.busca.is_some() {
        return format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            janela(f),
            casa(proximo(f))
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

macro_rules! bind_filtro {
    ($q:expr, $conta:expr, $f:expr) => {{
        let mut q = $q.bind($conta.0);
        if let Some(e) = $f.endpoint {
            q = q.bind(e.as_str());
        }
        if let Some(b) = &$f.busca {
            q = q.bind(sem_nul(b).into_owned());
        }
        q
    }};
}

pub(super) fn consulta_de(r: &PgRow) -> Result<ConsultaRegistrada, StoreError> {
    Ok(ConsultaRegistrada {
        em: r.try_get("data")?,
        endpoint: r.try_get("endpoint")?,
        chave: r.try_get("chave")?,
        status: u16::try_from(r.try_get::<i64, _>("status_http")?)
            .map_err(|_| corrupt("status HTTP"))?,
        cobrado: r.try_get("cobrado")?,
        valor: Centavos(r.try_get("valor_centavos")?),
        saldo_antes: r.try_get::<Option<i64>, _>("saldo_antes")?.map(Centavos),
        saldo_depois: r.try_get::<Option<i64>, _>("saldo_depois")?.map(Centavos),
    })
}

pub(super) async fn historico(
    pool: &PgPool,
    conta: ContaId,
    f: &FiltroHistorico,
) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
    let sql = sql_total(f);
    let total: i64 = bind_filtro!(sqlx::query_scalar(&sql), conta, f)
        .fetch_one(pool)
        .await?;
    let sql = sql_pagina(f);
    let q = bind_filtro!(sqlx::query(&sql), conta, f);
    let q = if f.busca.is_some() {
        let offset = i64::from(f.page.max(1) - 1) * i64::from(f.size);
        q.bind(i64::from(f.size)).bind(offset)
    } else {
        match faixa_da_pagina(total.unsigned_abs(), f.page, f.size) {
            Some((de, ate)) => q.bind(de).bind(ate),
            None => return Ok((Vec::new(), total.unsigned_abs())),
        }
    };
    let rows = q.fetch_all(pool).await?;
    let itens = rows
        .iter()
        .map(consulta_de)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((itens, total.unsigned_abs()))
}

const SQL_USO_HORAS: &str = "SELECT endpoint, quantidade, valor_centavos FROM consultas_uso_hora
     WHERE conta_id = $1 AND hora > $2";
const SQL_USO_BORDA: &str = "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0)::BIGINT
     FROM consultas WHERE conta_id = $1 AND data >= $2 AND data < $3 GROUP BY endpoint";

fn fim_da_hora(hora: i64) -> DateTime<Utc> {
    DateTime::from_timestamp((hora + 1) * 3600, 0).unwrap_or_default()
}

pub(super) async fn uso_por_endpoint(
    pool: &PgPool,
    conta: ContaId,
    desde: DateTime<Utc>,
) -> Result<Vec<UsoEndpoint>, StoreError> {
    let hora = hora_utc(desde);
    let mut linhas: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_HORAS)
        .bind(conta.0)
        .bind(hora)
        .fetch_all(pool)
        .await?;
    let borda: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_BORDA)
        .bind(conta.0)
        .bind(desde)
        .bind(fim_da_hora(hora))
        .fetch_all(pool)
        .await?;
    linhas.extend(borda);
    Ok(somar_uso(linhas))
}

async fn explicar<'q>(
    pool: &PgPool,
    q: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
) -> Result<Vec<String>, StoreError> {
    let rows = q.fetch_all(pool).await?;
    rows.iter()
        .map(|r| Ok(r.try_get::<String, _>(0)?))
        .collect()
}

/// `EXPLAIN` of the total and page statements of `f` for `conta`, one line per plan line.
pub(super) async fn plano_historico(
    pool: &PgPool,
    conta: ContaId,
    f: &FiltroHistorico,
) -> Result<Vec<String>, StoreError> {
    let total = format!("EXPLAIN {}", sql_total(f));
    let mut v = explicar(pool, bind_filtro!(sqlx::query(&total), conta, f)).await?;
    let pagina = format!("EXPLAIN {}", sql_pagina(f));
    let q = bind_filtro!(sqlx::query(&pagina), conta, f);
    let q = if f.busca.is_some() {
        q.bind(i64::from(f.size)).bind(0_i64)
    } else {
        q.bind(1_i64).bind(i64::from(f.size))
    };
    v.extend(explicar(pool, q).await?);
    Ok(v)
}

/// `EXPLAIN` of the usage statements.
pub(super) async fn plano_uso(
    pool: &PgPool,
    conta: ContaId,
    desde: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    let hora = hora_utc(desde);
    let horas = format!("EXPLAIN {SQL_USO_HORAS}");
    let mut v = explicar(pool, sqlx::query(&horas).bind(conta.0).bind(hora)).await?;
    let borda = format!("EXPLAIN {SQL_USO_BORDA}");
    let q = sqlx::query(&borda)
        .bind(conta.0)
        .bind(desde)
        .bind(fim_da_hora(hora));
    v.extend(explicar(pool, q).await?);
    Ok(v)
}
