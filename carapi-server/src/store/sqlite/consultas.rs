//! Lookups: the charge and the uncharged record (both run by the lookup writer thread,
//! [`super::escritor`]) and the day's counters; history and usage are in [`super::historico`].

use chrono::NaiveDate;

use super::SqliteStore;
use super::linhas::primeiro_dia_mes;
use crate::money::Centavos;
use crate::store::{
    Cobranca, ContaId, RegistroConsulta, ResultadoCobranca, StoreError, UsoPeriodo,
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
