//! Lookups: the charge and the uncharged record (both run by the lookup writer thread,
//! [`super::escritor`]), history and usage.

use carapi_sdk::StatusConsulta;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;

use super::SqliteStore;
use super::linhas::{instante, ms, primeiro_dia_mes};
use crate::money::Centavos;
use crate::store::{
    Cobranca, ConsultaRegistrada, ContaId, FiltroHistorico, RegistroConsulta, ResultadoCobranca,
    StoreError, UsoEndpoint, UsoPeriodo,
};

pub(super) async fn registrar_consulta(
    store: &SqliteStore,
    r: RegistroConsulta,
) -> Result<(), StoreError> {
    store.escritor.registrar(r).await
}

pub(super) async fn cobrar_consulta(
    store: &SqliteStore,
    c: Cobranca,
) -> Result<ResultadoCobranca, StoreError> {
    store.escritor.cobrar(c).await
}

pub(super) async fn uso_periodo(
    store: &SqliteStore,
    conta: ContaId,
    dia: NaiveDate,
) -> Result<UsoPeriodo, StoreError> {
    let hoje: Option<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT requisicoes, cobradas, erros, gasto_centavos FROM uso_diario WHERE conta_id = ? AND dia = ?",
    )
    .bind(conta.0)
    .bind(dia.to_string())
    .fetch_optional(&store.leitura)
    .await?;
    let (inicio, fim) = primeiro_dia_mes(dia);
    let (mes_req, mes_gasto): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(requisicoes), 0), COALESCE(SUM(gasto_centavos), 0) FROM uso_diario
         WHERE conta_id = ? AND dia >= ? AND dia < ?",
    )
    .bind(conta.0)
    .bind(&inicio)
    .bind(&fim)
    .fetch_one(&store.leitura)
    .await?;
    let (r, c, e, g) = hoje.unwrap_or_default();
    Ok(UsoPeriodo {
        hoje_requisicoes: r as u64,
        hoje_cobradas: c as u64,
        hoje_erros: e as u64,
        hoje_gasto: Centavos(g),
        mes_requisicoes: mes_req as u64,
        mes_gasto: Centavos(mes_gasto),
    })
}

pub(super) async fn historico(
    store: &SqliteStore,
    conta: ContaId,
    f: &FiltroHistorico,
) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
    let mut filtro = String::from(" FROM consultas WHERE conta_id = ?");
    if f.busca.is_some() {
        filtro.push_str(" AND (instr(upper(COALESCE(chave, '')), upper(?)) > 0 OR instr(upper(endpoint), upper(?)) > 0)");
    }
    if f.endpoint.is_some() {
        filtro.push_str(" AND endpoint = ?");
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => filtro.push_str(" AND status_http = 200"),
        Some(StatusConsulta::Erro) => filtro.push_str(" AND status_http <> 200"),
        None => {}
    }
    macro_rules! bind_filtro {
        ($q:expr) => {{
            let mut q = $q.bind(conta.0);
            if let Some(b) = &f.busca {
                q = q.bind(b.clone()).bind(b.clone());
            }
            if let Some(e) = f.endpoint {
                q = q.bind(e.as_str());
            }
            q
        }};
    }
    let sql_total = format!("SELECT COUNT(*){filtro}");
    let total: i64 = bind_filtro!(sqlx::query_scalar(&sql_total))
        .fetch_one(&store.leitura)
        .await?;
    let sql = format!("SELECT *{filtro} ORDER BY id DESC LIMIT ? OFFSET ?");
    let offset = i64::from(f.page.max(1) - 1) * i64::from(f.size);
    let rows = bind_filtro!(sqlx::query(&sql))
        .bind(i64::from(f.size))
        .bind(offset)
        .fetch_all(&store.leitura)
        .await?;
    let itens = rows
        .iter()
        .map(|r| {
            Ok(ConsultaRegistrada {
                em: instante(r.try_get("data_ms")?),
                endpoint: r.try_get("endpoint")?,
                chave: r.try_get("chave")?,
                status: r.try_get::<i64, _>("status_http")? as u16,
                cobrado: r.try_get::<i64, _>("cobrado")? != 0,
                valor: Centavos(r.try_get("valor_centavos")?),
                saldo_antes: r.try_get::<Option<i64>, _>("saldo_antes")?.map(Centavos),
                saldo_depois: r.try_get::<Option<i64>, _>("saldo_depois")?.map(Centavos),
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok((itens, total as u64))
}

pub(super) async fn uso_por_endpoint(
    store: &SqliteStore,
    conta: ContaId,
    desde: DateTime<Utc>,
) -> Result<Vec<UsoEndpoint>, StoreError> {
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0) FROM consultas
         WHERE conta_id = ? AND data_ms >= ? GROUP BY endpoint ORDER BY endpoint",
    )
    .bind(conta.0)
    .bind(ms(desde))
    .fetch_all(&store.leitura)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(endpoint, n, v)| UsoEndpoint {
            endpoint,
            quantidade: n as u64,
            valor_total: Centavos(v),
        })
        .collect())
}
