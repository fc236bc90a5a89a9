//! Lookups: the charge transaction, the uncharged record and the day's counters; history and
//! usage queries are in [`super::historico`].
//!
//! A charge locks its account row (`SELECT ... FOR UPDATE`) before reading the limit counters,
//! the balance and the latest history instant, plans with
//! [`crate::money::cobranca::plan_cobranca`] and applies the plan; the debit itself is still
//! conditional (`WHERE saldo_centavos >= debit`) and its row count checked. When the reply of
//! its `COMMIT` is lost, the outcome is looked up ([`super::outcome`]).

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, EndpointConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

use super::PgStore;
use super::rows::{conta_state, corrupt, month_of};
use crate::money::Centavos;
use crate::money::cobranca::{self, CobrancaPlan, CobrancaState, Counters, HistoricoRow};
use crate::store::{
    Cobranca, CobrancaResult, ConsultaRecord, ConsultasStore, ContaId, Estorno, HistoricoFilter,
    RecordedConsulta, StoreError, UsoEndpoint, UsoPeriod,
};

type Tx = Transaction<'static, Postgres>;

/// Adds one lookup to the day's counters (same transaction as its history row).
async fn count(tx: &mut Tx, conta: ContaId, day: NaiveDate, c: Counters) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO uso_diario AS u (conta_id, dia, requisicoes, cobradas, erros, gasto_centavos)
         VALUES ($1, $2, 1, $3, $4, $5)
         ON CONFLICT (conta_id, dia) DO UPDATE SET requisicoes = u.requisicoes + 1,
           cobradas = u.cobradas + excluded.cobradas, erros = u.erros + excluded.erros,
           gasto_centavos = u.gasto_centavos + excluded.gasto_centavos",
    )
    .bind(conta.0)
    .bind(day)
    .bind(i64::from(c.cobrada))
    .bind(i64::from(c.is_error))
    .bind(c.gasto.get())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Who and what a history row is about; its amounts come from the plan.
struct Chave<'a> {
    conta: ContaId,
    endpoint: EndpointConsulta,
    chave: Option<&'a str>,
    request_id: Option<Uuid>,
}

/// Inserts one history row with its ordinals: each group's count plus one (rules in
/// [`crate::store::historico`]). The caller has locked the account row, so that the account's
/// inserts are serialised and the ordinals dense.
async fn insert_consulta(tx: &mut Tx, k: &Chave<'_>, l: &HistoricoRow) -> Result<i64, StoreError> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO consultas (conta_id, data, endpoint, chave, status_http, cobrado,
             valor_centavos, saldo_antes, saldo_depois, pedido,
             ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status)
         SELECT $1::BIGINT, $2::TIMESTAMPTZ, $3::TEXT, $4::TEXT, $5::BIGINT, $6::BOOLEAN,
             $7::BIGINT, $8::BIGINT, $9::BIGINT, $10::UUID,
             COALESCE(SUM(quantidade), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = $3), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE sucesso = ($5 = 200)), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = $3 AND sucesso = ($5 = 200)), 0) + 1
         FROM consultas_contagem WHERE conta_id = $1
         RETURNING id",
    )
    .bind(k.conta.0)
    .bind(l.data)
    .bind(k.endpoint.as_str())
    .bind(crate::store::historico::without_nul_opt(k.chave))
    .bind(i64::from(l.status))
    .bind(l.valor.get() > 0)
    .bind(l.valor.get())
    .bind(l.saldo_antes.map(|c| c.get()))
    .bind(l.saldo_depois.map(|c| c.get()))
    .bind(k.request_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(id)
}

/// `data` of the account's latest history row (after its row is locked).
async fn last_date(tx: &mut Tx, conta: ContaId) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT data FROM consultas WHERE conta_id = $1 ORDER BY ordem_conta DESC LIMIT 1",
    )
    .bind(conta.0)
    .fetch_optional(&mut **tx)
    .await?)
}

/// What the charge plan needs, read after the account row is locked: the counters only for the
/// limits the account has ([`cobranca::readings`]).
async fn state_of(tx: &mut Tx, c: &Cobranca) -> Result<CobrancaState, StoreError> {
    let row = sqlx::query("SELECT * FROM contas WHERE id = $1 FOR UPDATE")
        .bind(c.conta.0)
        .fetch_one(&mut **tx)
        .await?;
    let conta = conta_state(&row)?;
    let readings = cobranca::readings(conta.limite_diario, conta.limite_mensal);
    let (cobradas_hoje, gasto_mes) = if readings.cobradas_hoje || readings.gasto_mes {
        let (start, end) = month_of(c.day);
        sqlx::query_as(
            "SELECT COALESCE(SUM(cobradas) FILTER (WHERE dia = $2), 0)::BIGINT,
                    COALESCE(SUM(gasto_centavos), 0)::BIGINT
             FROM uso_diario WHERE conta_id = $1 AND dia >= $3 AND dia < $4",
        )
        .bind(c.conta.0)
        .bind(c.day)
        .bind(start)
        .bind(end)
        .fetch_one(&mut **tx)
        .await?
    } else {
        (0_i64, 0_i64)
    };
    Ok(CobrancaState {
        saldo: conta.saldo,
        legado: conta.legado,
        limite_diario: conta.limite_diario,
        limite_mensal: conta.limite_mensal,
        cobradas_hoje: cobradas_hoje.unsigned_abs(),
        gasto_mes: Centavos::new(gasto_mes),
        last_date: last_date(tx, c.conta).await?,
        consolidated: match &c.consolidate {
            Some(codigo) => consolidated(tx, codigo).await?,
            None => false,
        },
    })
}

/// Whether `codigo` was consolidated by an earlier charged lookup (read after the account's
/// row lock, so one account's lookups see each other's consolidation in order).
async fn consolidated(tx: &mut Tx, codigo: &CodigoCar) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar::<_, i32>("SELECT 1 FROM imoveis_consolidados WHERE codigo_car = $1")
            .bind(codigo.as_str())
            .fetch_optional(&mut **tx)
            .await?
            .is_some(),
    )
}

/// Writes `plano` for the charge `c`.
async fn apply(tx: &mut Tx, c: &Cobranca, plan: &CobrancaPlan) -> Result<(), StoreError> {
    if plan.debit.get() > 0 {
        let debited = sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos - $1
             WHERE id = $2 AND saldo_centavos >= $1",
        )
        .bind(plan.debit.get())
        .bind(c.conta.0)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if debited != 1 {
            // Cannot happen while the row is locked; refuse rather than go negative.
            return Err(corrupt("saldo mudou durante a transação"));
        }
    }
    let chave = Chave {
        conta: c.conta,
        endpoint: c.endpoint,
        chave: Some(&c.chave),
        request_id: Some(c.request_id),
    };
    let id = insert_consulta(tx, &chave, &plan.historico).await?;
    if let Some(valor) = plan.ledger_entry {
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
             VALUES ($1, 'debito', $2, 'consulta', $3, $4)",
        )
        .bind(c.conta.0)
        .bind(valor.get())
        .bind(id.to_string())
        .bind(plan.historico.data)
        .execute(&mut **tx)
        .await?;
    }
    count(tx, c.conta, c.day, plan.counters).await?;
    match (&c.consolidate, plan.consolidate) {
        (Some(codigo), true) => consolidate(tx, codigo, c.at).await,
        _ => Ok(()),
    }
}

/// Marks `codigo` consolidated at `em` unless it already was.
async fn consolidate(tx: &mut Tx, codigo: &CodigoCar, at: DateTime<Utc>) -> Result<(), StoreError> {
    // One insert into the small side table (migration 0002), never a write into `imoveis`.
    sqlx::query(
        "INSERT INTO imoveis_consolidados (codigo_car, consolidado_em) VALUES ($1, $2)
         ON CONFLICT (codigo_car) DO NOTHING",
    )
    .bind(codigo.as_str())
    .bind(at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[async_trait]
impl ConsultasStore for PgStore {
    async fn record_consulta(&self, r: ConsultaRecord) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Locks the account row: the history row's ordinals need the account's inserts
        // serialised (`insert_consulta`).
        let saldo: Option<i64> =
            sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = $1 FOR UPDATE")
                .bind(r.conta.0)
                .fetch_optional(&mut *tx)
                .await?;
        let last = last_date(&mut tx, r.conta).await?;
        let (line, counters) =
            cobranca::plan_record(saldo.map(Centavos::new), r.status, r.at, last);
        let chave = Chave {
            conta: r.conta,
            endpoint: r.endpoint,
            chave: r.chave.as_deref(),
            request_id: None,
        };
        insert_consulta(&mut tx, &chave, &line).await?;
        count(&mut tx, r.conta, r.day, counters).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn charge_consulta(&self, c: Cobranca) -> Result<CobrancaResult, StoreError> {
        let mut tx = self.pool.begin().await?;
        let state = state_of(&mut tx, &c).await?;
        let plan = cobranca::plan_cobranca(&state, c.endpoint, c.at);
        apply(&mut tx, &c, &plan).await?;
        match tx.commit().await {
            Ok(()) => Ok(plan.result),
            Err(e) => {
                // The reply was lost or the commit refused: learn which on another connection.
                match self.cobranca_outcome(c.conta, c.request_id, c.at).await {
                    Ok(Some(_)) => Ok(plan.result),
                    Ok(None) => Err(e.into()),
                    Err(d) => Err(StoreError::unknown_outcome(&e, &d)),
                }
            }
        }
    }

    async fn cobranca_outcome(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Option<RecordedConsulta>, StoreError> {
        super::outcome::cobranca(&self.pool, conta, request_id, at).await
    }

    async fn estornar_cobranca(
        &self,
        conta: ContaId,
        request_id: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Estorno, StoreError> {
        super::estorno::estornar(&self.pool, conta, request_id, at).await
    }

    async fn remove_uncharged(
        &self,
        conta: ContaId,
        antes: DateTime<Utc>,
        limite: u32,
    ) -> Result<u64, StoreError> {
        super::retencao::remove(&self.pool, conta, antes, limite).await
    }

    async fn uso_period(&self, conta: ContaId, day: NaiveDate) -> Result<UsoPeriod, StoreError> {
        let (start, end) = month_of(day);
        let (r, c, e, g, mes_req, mes_gasto): (i64, i64, i64, i64, i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(requisicoes) FILTER (WHERE dia = $2), 0)::BIGINT,
                COALESCE(SUM(cobradas) FILTER (WHERE dia = $2), 0)::BIGINT,
                COALESCE(SUM(erros) FILTER (WHERE dia = $2), 0)::BIGINT,
                COALESCE(SUM(gasto_centavos) FILTER (WHERE dia = $2), 0)::BIGINT,
                COALESCE(SUM(requisicoes), 0)::BIGINT,
                COALESCE(SUM(gasto_centavos), 0)::BIGINT
         FROM uso_diario WHERE conta_id = $1 AND dia >= $3 AND dia < $4",
        )
        .bind(conta.0)
        .bind(day)
        .bind(start)
        .bind(end)
        .fetch_one(&self.pool)
        .await?;
        Ok(UsoPeriod {
            hoje_requisicoes: r.unsigned_abs(),
            hoje_cobradas: c.unsigned_abs(),
            hoje_erros: e.unsigned_abs(),
            hoje_gasto: Centavos::new(g),
            mes_requisicoes: mes_req.unsigned_abs(),
            mes_gasto: Centavos::new(mes_gasto),
        })
    }

    async fn historico(
        &self,
        conta: ContaId,
        filter: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
        super::historico::historico(&self.historico, conta, filter).await
    }

    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        super::historico::uso_by_endpoint(&self.historico, conta, since).await
    }
}
