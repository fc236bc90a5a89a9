//! History and usage in O(page) plus an index seek, for every filter combination
//! (migrations 0012 and 0013; rules in [`crate::store::historico`]).
//!
//! A page is read in two steps in one statement: the ids of the page from the filter
//! combination's index (`INDEXED BY`), as the range of ordinals of the page (no rows are
//! skipped however deep the page), then the page's rows by primary key. Totals come from
//! `consultas_contagem`; `busca` reads a bounded window of the newest rows.

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::SqliteStore;
use super::linhas::{instante, ms};
use crate::money::Centavos;
use crate::store::historico::{
    JANELA_BUSCA, coluna_ordem, faixa_da_pagina, hora_utc, indice, sem_nul,
};
use crate::store::{ConsultaRegistrada, ContaId, FiltroHistorico, StoreError, UsoEndpoint};

const COLUNAS: &str = "c.id, c.data_ms, c.endpoint, c.chave, c.status_http, c.cobrado, \
    c.valor_centavos, c.saldo_antes, c.saldo_depois";

/// `WHERE` of the filter's index (account, endpoint, status); parameters: account, then the
/// endpoint when filtered.
fn onde(f: &FiltroHistorico) -> String {
    let mut s = format!(
        " FROM consultas INDEXED BY {} WHERE conta_id = ?",
        indice(f)
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

/// The page statement (`?` in order: account, endpoint?, then busca x2, limit, offset with
/// `busca`, or the page's first and last ordinals without it, [`faixa_da_pagina`]).
fn sql_pagina(f: &FiltroHistorico) -> String {
    let ordem = coluna_ordem(f);
    if f.busca.is_some() {
        format!(
            "SELECT {COLUNAS} FROM (SELECT id{} ORDER BY {ordem} DESC LIMIT {JANELA_BUSCA}) AS p
             CROSS JOIN consultas AS c ON c.id = p.id
             WHERE instr(upper(COALESCE(c.chave, '')), upper(?)) > 0 OR instr(upper(c.endpoint), upper(?)) > 0
             LIMIT ? OFFSET ?",
            onde(f)
        )
    } else {
        format!(
            "SELECT {COLUNAS} FROM (SELECT id{} AND {ordem} BETWEEN ? AND ?) AS p
             CROSS JOIN consultas AS c ON c.id = p.id",
            onde(f)
        )
    }
}

/// The total statement (`?`: account, endpoint?, busca x2?).
fn sql_total(f: &FiltroHistorico) -> String {
    if f.busca.is_some() {
        return format!(
            "SELECT COUNT(*) FROM (SELECT id{} ORDER BY {} DESC LIMIT {JANELA_BUSCA}) AS p
             CROSS JOIN consultas AS c ON c.id = p.id
             WHERE instr(upper(COALESCE(c.chave, '')), upper(?)) > 0 OR instr(upper(c.endpoint), upper(?)) > 0",
            onde(f),
            coluna_ordem(f)
        );
    }
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

macro_rules! bind_filtro {
    ($q:expr, $conta:expr, $f:expr) => {{
        let mut q = $q.bind($conta.0);
        if let Some(e) = $f.endpoint {
            q = q.bind(e.as_str());
        }
        if let Some(b) = &$f.busca {
            let b = sem_nul(b).into_owned();
            q = q.bind(b.clone()).bind(b);
        }
        q
    }};
}

fn consulta_de(r: &SqliteRow) -> Result<(i64, ConsultaRegistrada), StoreError> {
    Ok((
        r.try_get("id")?,
        ConsultaRegistrada {
            em: instante(r.try_get("data_ms")?),
            endpoint: r.try_get("endpoint")?,
            chave: r.try_get("chave")?,
            status: r.try_get::<i64, _>("status_http")? as u16,
            cobrado: r.try_get::<i64, _>("cobrado")? != 0,
            valor: Centavos(r.try_get("valor_centavos")?),
            saldo_antes: r.try_get::<Option<i64>, _>("saldo_antes")?.map(Centavos),
            saldo_depois: r.try_get::<Option<i64>, _>("saldo_depois")?.map(Centavos),
        },
    ))
}

pub(super) async fn historico(
    store: &SqliteStore,
    conta: ContaId,
    f: &FiltroHistorico,
) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
    let sql = sql_total(f);
    let total: i64 = bind_filtro!(sqlx::query_scalar(&sql), conta, f)
        .fetch_one(&store.historico)
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
    let rows = q.fetch_all(&store.historico).await?;
    let mut itens = rows
        .iter()
        .map(consulta_de)
        .collect::<Result<Vec<_>, _>>()?;
    itens.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    Ok((
        itens.into_iter().map(|(_, c)| c).collect(),
        total.unsigned_abs(),
    ))
}

/// `?`: account, hour, account, from, to.
const SQL_USO_HORAS: &str = "SELECT endpoint, quantidade, valor_centavos FROM consultas_uso_hora
     WHERE conta_id = ? AND hora > ?";
const SQL_USO_BORDA: &str = "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0)
     FROM consultas INDEXED BY consultas_conta_data
     WHERE conta_id = ? AND data_ms >= ? AND data_ms < ? GROUP BY endpoint";

pub(super) async fn uso_por_endpoint(
    store: &SqliteStore,
    conta: ContaId,
    desde: DateTime<Utc>,
) -> Result<Vec<UsoEndpoint>, StoreError> {
    let hora = hora_utc(desde);
    let mut linhas: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_HORAS)
        .bind(conta.0)
        .bind(hora)
        .fetch_all(&store.historico)
        .await?;
    let borda: Vec<(String, i64, i64)> = sqlx::query_as(SQL_USO_BORDA)
        .bind(conta.0)
        .bind(ms(desde))
        .bind((hora + 1) * 3_600_000)
        .fetch_all(&store.historico)
        .await?;
    linhas.extend(borda);
    Ok(crate::store::historico::somar_uso(linhas))
}

/// `EXPLAIN QUERY PLAN` of the total and page statements of `f` for `conta`, one line per
/// plan node (tests: every filter combination is served by an index).
///
/// # Errors
/// [`StoreError`] when the database fails.
pub async fn plano_historico(
    store: &SqliteStore,
    conta: ContaId,
    f: &FiltroHistorico,
) -> Result<Vec<String>, StoreError> {
    let mut v = Vec::new();
    for sql in [sql_total(f), sql_pagina(f)] {
        let sql = format!("EXPLAIN QUERY PLAN {sql}");
        let mut q = bind_filtro!(sqlx::query(&sql), conta, f);
        if sql.contains("OFFSET") {
            q = q.bind(i64::from(f.size)).bind(0_i64);
        } else if sql.contains("BETWEEN") {
            q = q.bind(1_i64).bind(i64::from(f.size));
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
pub async fn plano_uso(
    store: &SqliteStore,
    conta: ContaId,
    desde: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    let mut v = Vec::new();
    let h = hora_utc(desde);
    let horas = format!("EXPLAIN QUERY PLAN {SQL_USO_HORAS}");
    let q = sqlx::query(&horas).bind(conta.0).bind(h);
    for r in q.fetch_all(&store.historico).await? {
        v.push(r.try_get::<String, _>("detail")?);
    }
    let borda = format!("EXPLAIN QUERY PLAN {SQL_USO_BORDA}");
    let q = sqlx::query(&borda)
        .bind(conta.0)
        .bind(ms(desde))
        .bind((h + 1) * 3_600_000);
    for r in q.fetch_all(&store.historico).await? {
        v.push(r.try_get::<String, _>("detail")?);
    }
    Ok(v)
}
