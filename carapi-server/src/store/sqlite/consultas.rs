//! Lookups: the charge and the uncharged record (both run by the lookup writer thread,
//! [`super::escritor`]), history and usage.

use async_trait::async_trait;
use carapi_sdk::StatusConsulta;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;

use super::SqliteStore;
use super::linhas::{instante, ms, primeiro_dia_mes};
use crate::money::Centavos;
use crate::store::{
    Cobranca, ConsultaRegistrada, ConsultasStore, ContaId, FiltroHistorico, RegistroConsulta,
    ResultadoCobranca, StoreError, UsoEndpoint, UsoPeriodo,
};

#[async_trait]
impl ConsultasStore for SqliteStore {
    async fn registrar_consulta(&self, r: RegistroConsulta) -> Result<(), StoreError> {
        self.escritor.registrar(r).await
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        self.escritor.cobrar(c).await
    }

    async fn uso_periodo(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriodo, StoreError> {
        let hoje: Option<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT requisicoes, cobradas, erros, gasto_centavos FROM uso_diario WHERE conta_id = ? AND dia = ?",
    )
    .bind(conta.0)
    .bind(dia.to_string())
    .fetch_optional(&self.leitura)
    .await?;
        let (inicio, fim) = primeiro_dia_mes(dia);
        let (mes_req, mes_gasto): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(requisicoes), 0), COALESCE(SUM(gasto_centavos), 0) FROM uso_diario
         WHERE conta_id = ? AND dia >= ? AND dia < ?",
        )
        .bind(conta.0)
        .bind(&inicio)
        .bind(&fim)
        .fetch_one(&self.leitura)
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

    async fn historico(
        &self,
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
            .fetch_one(&self.leitura)
            .await?;
        let sql = format!("SELECT *{filtro} ORDER BY id DESC LIMIT ? OFFSET ?");
        let offset = i64::from(f.page.max(1) - 1) * i64::from(f.size);
        let rows = bind_filtro!(sqlx::query(&sql))
            .bind(i64::from(f.size))
            .bind(offset)
            .fetch_all(&self.leitura)
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

    async fn uso_por_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0) FROM consultas
         WHERE conta_id = ? AND data_ms >= ? GROUP BY endpoint ORDER BY endpoint",
        )
        .bind(conta.0)
        .bind(ms(desde))
        .fetch_all(&self.leitura)
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
}
