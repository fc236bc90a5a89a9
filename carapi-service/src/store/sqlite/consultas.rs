//! Lookups: the charge and the uncharged record (both run by the lookup writer thread,
//! [`super::writer`]) and the day's counters; history and usage queries are in
//! [`super::historico`].

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};

use super::SqliteStore;
use super::rows::{first_day_of_month, ms};
use crate::money::Centavos;
use crate::store::{
    Cobranca, CobrancaResult, ConsultaRecord, ConsultasStore, ContaId, Estorno, HistoricoFilter,
    RecordedConsulta, StoreError, UsoEndpoint, UsoPeriod,
};
use uuid::Uuid;

#[async_trait]
impl ConsultasStore for SqliteStore {
    async fn record_consulta(&self, r: ConsultaRecord) -> Result<(), StoreError> {
        self.writer.record(r).await
    }

    async fn charge_consulta(&self, c: Cobranca) -> Result<CobrancaResult, StoreError> {
        self.writer.charge(c).await
    }

    /// Read on the read pool: once the writer's reply is lost its transaction is over (the
    /// reply is dropped after the group's `COMMIT` or `ROLLBACK`, or with the connection
    /// when the thread stops).
    async fn cobranca_outcome(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Option<RecordedConsulta>, StoreError> {
        let row = sqlx::query(
            "SELECT id, data_ms, endpoint, chave, status_http, cobrado, valor_centavos,
                    saldo_antes, saldo_depois
             FROM consultas WHERE conta_id = ? AND data_ms >= ? AND pedido = ?",
        )
        .bind(conta.0)
        .bind(ms(at))
        .bind(request_id.to_string())
        .fetch_optional(&self.reading)
        .await?;
        Ok(row
            .as_ref()
            .map(super::historico::consulta_of)
            .transpose()?
            .map(|(_, c)| c))
    }

    async fn estornar_cobranca(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Estorno, StoreError> {
        super::estorno::estornar(self, conta, request_id, at).await
    }

    async fn remove_uncharged(
        &self,
        conta: ContaId,
        antes: DateTime<Utc>,
        limite: u32,
    ) -> Result<u64, StoreError> {
        super::retencao::remove(self, conta, antes, limite).await
    }

    async fn uso_period(&self, conta: ContaId, day: NaiveDate) -> Result<UsoPeriod, StoreError> {
        let hoje: Option<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT requisicoes, cobradas, erros, gasto_centavos FROM uso_diario WHERE conta_id = ? AND dia = ?",
    )
    .bind(conta.0)
    .bind(day.to_string())
    .fetch_optional(&self.reading)
    .await?;
        let (start, end) = first_day_of_month(day);
        let (mes_req, mes_gasto): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(requisicoes), 0), COALESCE(SUM(gasto_centavos), 0) FROM uso_diario
         WHERE conta_id = ? AND dia >= ? AND dia < ?",
        )
        .bind(conta.0)
        .bind(&start)
        .bind(&end)
        .fetch_one(&self.reading)
        .await?;
        let (r, c, e, g) = hoje.unwrap_or_default();
        Ok(UsoPeriod {
            hoje_requisicoes: r as u64,
            hoje_cobradas: c as u64,
            hoje_erros: e as u64,
            hoje_gasto: Centavos::new(g),
            mes_requisicoes: mes_req as u64,
            mes_gasto: Centavos::new(mes_gasto),
        })
    }

    async fn historico(
        &self,
        conta: ContaId,
        f: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
        super::historico::historico(self, conta, f).await
    }

    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        super::historico::uso_by_endpoint(self, conta, since).await
    }
}
