//! Lookups: the charge transaction, the uncharged record and the day's counters; history and
//! usage queries are in [`super::historico`].
//!
//! A charge locks its account row (`SELECT ... FOR UPDATE`) before reading the limit counters,
//! the balance and the latest history instant, plans with
//! [`crate::money::cobranca::planejar_cobranca`] and applies the plan; the debit itself is still
//! conditional (`WHERE saldo_centavos >= debit`) and its row count checked. When the reply of
//! its `COMMIT` is lost, the outcome is looked up ([`super::desfecho`]).

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, EndpointConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

use super::PgStore;
use super::linhas::{conta_de, corrupt, mes_de};
use crate::money::Centavos;
use crate::money::cobranca::{self, Contagem, EstadoCobranca, LinhaHistorico, PlanoCobranca};
use crate::store::{
    Cobranca, ConsultaRegistrada, ConsultasStore, ContaId, FiltroHistorico, RegistroConsulta,
    ResultadoCobranca, StoreError, UsoEndpoint, UsoPeriodo,
};

type Tx = Transaction<'static, Postgres>;

/// Adds one lookup to the day's counters (same transaction as its history row).
async fn contar(
    tx: &mut Tx,
    conta: ContaId,
    dia: NaiveDate,
    c: Contagem,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO uso_diario AS u (conta_id, dia, requisicoes, cobradas, erros, gasto_centavos)
         VALUES ($1, $2, 1, $3, $4, $5)
         ON CONFLICT (conta_id, dia) DO UPDATE SET requisicoes = u.requisicoes + 1,
           cobradas = u.cobradas + excluded.cobradas, erros = u.erros + excluded.erros,
           gasto_centavos = u.gasto_centavos + excluded.gasto_centavos",
    )
    .bind(conta.0)
    .bind(dia)
    .bind(i64::from(c.cobrada))
    .bind(i64::from(c.erro))
    .bind(c.gasto.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Who and what a history row is about; its amounts come from the plan.
struct Chave<'a> {
    conta: ContaId,
    endpoint: EndpointConsulta,
    chave: Option<&'a str>,
    pedido: Option<Uuid>,
}

/// Inserts one history row with its ordinals: each group's count plus one (rules in
/// [`crate::store::historico`]). The caller has locked the account row, so that the account's
/// inserts are serialised and the ordinals dense.
async fn inserir_consulta(
    tx: &mut Tx,
    k: &Chave<'_>,
    l: &LinhaHistorico,
) -> Result<i64, StoreError> {
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
    .bind(crate::store::historico::sem_nul_opt(k.chave))
    .bind(i64::from(l.status))
    .bind(l.valor.0 > 0)
    .bind(l.valor.0)
    .bind(l.saldo_antes.map(|c| c.0))
    .bind(l.saldo_depois.map(|c| c.0))
    .bind(k.pedido)
    .fetch_one(&mut **tx)
    .await?;
    Ok(id)
}

/// `data` of the account's latest history row (after its row is locked).
async fn ultima_data(tx: &mut Tx, conta: ContaId) -> Result<Option<DateTime<Utc>>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT data FROM consultas WHERE conta_id = $1 ORDER BY ordem_conta DESC LIMIT 1",
    )
    .bind(conta.0)
    .fetch_optional(&mut **tx)
    .await?)
}

/// What the charge plan needs, read after the account row is locked: the counters only for the
/// limits the account has ([`cobranca::leituras`]).
async fn estado(tx: &mut Tx, c: &Cobranca) -> Result<EstadoCobranca, StoreError> {
    let row = sqlx::query("SELECT * FROM contas WHERE id = $1 FOR UPDATE")
        .bind(c.conta.0)
        .fetch_one(&mut **tx)
        .await?;
    let conta = conta_de(&row)?;
    let leituras = cobranca::leituras(conta.limite_diario, conta.limite_mensal);
    let (cobradas_hoje, gasto_mes) = if leituras.cobradas_hoje || leituras.gasto_mes {
        let (inicio, fim) = mes_de(c.dia);
        sqlx::query_as(
            "SELECT COALESCE(SUM(cobradas) FILTER (WHERE dia = $2), 0)::BIGINT,
                    COALESCE(SUM(gasto_centavos), 0)::BIGINT
             FROM uso_diario WHERE conta_id = $1 AND dia >= $3 AND dia < $4",
        )
        .bind(c.conta.0)
        .bind(c.dia)
        .bind(inicio)
        .bind(fim)
        .fetch_one(&mut **tx)
        .await?
    } else {
        (0_i64, 0_i64)
    };
    Ok(EstadoCobranca {
        saldo: conta.saldo,
        legado: conta.legado,
        limite_diario: conta.limite_diario,
        limite_mensal: conta.limite_mensal,
        cobradas_hoje: cobradas_hoje.unsigned_abs(),
        gasto_mes: Centavos(gasto_mes),
        ultima_data: ultima_data(tx, c.conta).await?,
    })
}

/// Writes `plano` for the charge `c`; returns `cache` (whether the record was already
/// consolidated).
async fn aplicar(tx: &mut Tx, c: &Cobranca, plano: &PlanoCobranca) -> Result<bool, StoreError> {
    if plano.debito.0 > 0 {
        let debitou = sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos - $1
             WHERE id = $2 AND saldo_centavos >= $1",
        )
        .bind(plano.debito.0)
        .bind(c.conta.0)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if debitou != 1 {
            // Cannot happen while the row is locked; refuse rather than go negative.
            return Err(corrupt("saldo mudou durante a transação"));
        }
    }
    let chave = Chave {
        conta: c.conta,
        endpoint: c.endpoint,
        chave: Some(&c.chave),
        pedido: Some(c.pedido),
    };
    let id = inserir_consulta(tx, &chave, &plano.historico).await?;
    if let Some(valor) = plano.lancamento {
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
             VALUES ($1, 'debito', $2, 'consulta', $3, $4)",
        )
        .bind(c.conta.0)
        .bind(valor.0)
        .bind(id.to_string())
        .bind(plano.historico.data)
        .execute(&mut **tx)
        .await?;
    }
    contar(tx, c.conta, c.dia, plano.contagem).await?;
    match (&c.consolidar, plano.consolidar) {
        (Some(codigo), true) => consolidar(tx, codigo, c.em).await,
        _ => Ok(false),
    }
}

/// Marks `codigo` consolidated at `em` unless it already was; returns whether it already was
/// (the answer's `cache`).
async fn consolidar(
    tx: &mut Tx,
    codigo: &CodigoCar,
    em: DateTime<Utc>,
) -> Result<bool, StoreError> {
    // One insert into the small side table (migration 0002), never a write into `imoveis`. Two
    // first lookups of one code cannot both see "new": the second waits on the first's key and
    // then finds the conflict.
    let novo = sqlx::query(
        "INSERT INTO imoveis_consolidados (codigo_car, consolidado_em) VALUES ($1, $2)
         ON CONFLICT (codigo_car) DO NOTHING",
    )
    .bind(codigo.as_str())
    .bind(em)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(novo == 0)
}

#[async_trait]
impl ConsultasStore for PgStore {
    async fn registrar_consulta(&self, r: RegistroConsulta) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Locks the account row: the history row's ordinals need the account's inserts
        // serialised (`inserir_consulta`).
        let saldo: Option<i64> =
            sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = $1 FOR UPDATE")
                .bind(r.conta.0)
                .fetch_optional(&mut *tx)
                .await?;
        let ultima = ultima_data(&mut tx, r.conta).await?;
        let (linha, contagem) =
            cobranca::planejar_registro(saldo.map(Centavos), r.status, r.em, ultima);
        let chave = Chave {
            conta: r.conta,
            endpoint: r.endpoint,
            chave: r.chave.as_deref(),
            pedido: None,
        };
        inserir_consulta(&mut tx, &chave, &linha).await?;
        contar(&mut tx, r.conta, r.dia, contagem).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        let mut tx = self.pool.begin().await?;
        let estado = estado(&mut tx, &c).await?;
        let plano = cobranca::planejar_cobranca(&estado, c.endpoint, c.em);
        let cache = aplicar(&mut tx, &c, &plano).await?;
        match tx.commit().await {
            Ok(()) => Ok(plano.resultado_com(cache)),
            Err(e) => {
                // The reply was lost or the commit refused: learn which on another connection.
                match self.desfecho_cobranca(c.conta, c.pedido, c.em).await {
                    Ok(Some(_)) => Ok(plano.resultado_com(cache)),
                    Ok(None) => Err(e.into()),
                    Err(d) => Err(StoreError::desfecho_desconhecido(&e, &d)),
                }
            }
        }
    }

    async fn desfecho_cobranca(
        &self,
        conta: ContaId,
        pedido: Uuid,
        em: DateTime<Utc>,
    ) -> Result<Option<ConsultaRegistrada>, StoreError> {
        super::desfecho::cobranca(&self.pool, conta, pedido, em).await
    }

    async fn uso_periodo(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriodo, StoreError> {
        let (inicio, fim) = mes_de(dia);
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
        .bind(dia)
        .bind(inicio)
        .bind(fim)
        .fetch_one(&self.pool)
        .await?;
        Ok(UsoPeriodo {
            hoje_requisicoes: r.unsigned_abs(),
            hoje_cobradas: c.unsigned_abs(),
            hoje_erros: e.unsigned_abs(),
            hoje_gasto: Centavos(g),
            mes_requisicoes: mes_req.unsigned_abs(),
            mes_gasto: Centavos(mes_gasto),
        })
    }

    async fn historico(
        &self,
        conta: ContaId,
        filtro: &FiltroHistorico,
    ) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
        super::historico::historico(&self.historico, conta, filtro).await
    }

    async fn uso_por_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        super::historico::uso_por_endpoint(&self.historico, conta, desde).await
    }
}
