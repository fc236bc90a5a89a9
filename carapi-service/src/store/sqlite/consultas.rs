//! Lookups: the charge and the uncharged record (both run by the lookup writer thread,
//! [`super::escritor`]) and the day's counters; history and usage queries are in
//! [`super::historico`].

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};

use super::SqliteStore;
use super::linhas::{ms, primeiro_dia_mes};
use crate::money::Centavos;
use crate::store::{
    Cobranca, ConsultaRegistrada, ConsultasStore, ContaId, FiltroHistorico, RegistroConsulta,
    ResultadoCobranca, StoreError, UsoEndpoint, UsoPeriodo,
};
use uuid::Uuid;

#[async_trait]
impl ConsultasStore for SqliteStore {
    async fn registrar_consulta(&self, r: RegistroConsulta) -> Result<(), StoreError> {
        self.escritor.registrar(r).await
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        self.escritor.cobrar(c).await
    }

    /// Read on the read pool: once the writer's reply is lost its transaction is over (the
    /// reply is dropped after the group's `COMMIT` or `ROLLBACK`, or with the connection
    /// when the thread stops).
    async fn desfecho_cobranca(
        &self,
        conta: ContaId,
        pedido: Uuid,
        em: DateTime<Utc>,
    ) -> Result<Option<ConsultaRegistrada>, StoreError> {
        let row = sqlx::query(
            "SELECT id, data_ms, endpoint, chave, status_http, cobrado, valor_centavos,
                    saldo_antes, saldo_depois
             FROM consultas WHERE conta_id = ? AND data_ms >= ? AND pedido = ?",
        )
        .bind(conta.0)
        .bind(ms(em))
        .bind(pedido.to_string())
        .fetch_optional(&self.leitura)
        .await?;
        Ok(row
            .as_ref()
            .map(super::historico::consulta_de)
            .transpose()?
            .map(|(_, c)| c))
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
        super::historico::historico(self, conta, f).await
    }

    async fn uso_por_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        super::historico::uso_por_endpoint(self, conta, desde).await
    }
}
