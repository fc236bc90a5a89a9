//! Lookups: the charge transaction, the uncharged record and the day's counters; history and
//! usage queries are in [`super::historico`].
//!
//! A charge locks its account row (`SELECT ... FOR UPDATE`) before reading the limit counters
//! and the balance, so charges of one account run one after another while other accounts are
//! not blocked; the debit itself is still conditional (`WHERE saldo_centavos >= price`) and
//! its row count checked.

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, EndpointConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Postgres, Transaction};

use super::PgStore;
use super::linhas::{conta_de, corrupt, mes_de};
use crate::money::Centavos;
use crate::regras::{self, Decisao, EstadoCobranca};
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
    cobrada: bool,
    erro: bool,
    gasto: Centavos,
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
    .bind(i64::from(cobrada))
    .bind(i64::from(erro))
    .bind(gasto.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// One history row; its fields as in [`ConsultaRegistrada`].
struct Linha<'a> {
    conta: ContaId,
    endpoint: EndpointConsulta,
    chave: Option<&'a str>,
    status: u16,
    valor: Centavos,
    saldo_antes: Option<Centavos>,
    saldo_depois: Option<Centavos>,
    em: DateTime<Utc>,
}

/// Inserts one history row with its ordinals: each group's count plus one (rules in
/// [`crate::store::historico`]). The caller has locked the account row, so that the account's
/// inserts are serialised and the ordinals dense.
async fn inserir_consulta(tx: &mut Tx, l: Linha<'_>) -> Result<i64, StoreError> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO consultas (conta_id, data, endpoint, chave, status_http, cobrado,
             valor_centavos, saldo_antes, saldo_depois,
             ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status)
         SELECT $1::BIGINT, $2::TIMESTAMPTZ, $3::TEXT, $4::TEXT, $5::BIGINT, $6::BOOLEAN,
             $7::BIGINT, $8::BIGINT, $9::BIGINT,
             COALESCE(SUM(quantidade), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = $3), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE sucesso = ($5 = 200)), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = $3 AND sucesso = ($5 = 200)), 0) + 1
         FROM consultas_contagem WHERE conta_id = $1
         RETURNING id",
    )
    .bind(l.conta.0)
    .bind(l.em)
    .bind(l.endpoint.as_str())
    .bind(crate::store::historico::sem_nul_opt(l.chave))
    .bind(i64::from(l.status))
    .bind(l.valor.0 > 0)
    .bind(l.valor.0)
    .bind(l.saldo_antes.map(|c| c.0))
    .bind(l.saldo_depois.map(|c| c.0))
    .fetch_one(&mut **tx)
    .await?;
    Ok(id)
}

/// The day's charged lookups and the month's spending of the charge's account, read in its
/// transaction (after the account row is locked).
async fn contadores(tx: &mut Tx, c: &Cobranca) -> Result<(u64, Centavos), StoreError> {
    let (inicio, fim) = mes_de(c.dia);
    let (cobradas_hoje, gasto_mes): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(cobradas) FILTER (WHERE dia = $2), 0)::BIGINT,
                COALESCE(SUM(gasto_centavos), 0)::BIGINT
         FROM uso_diario WHERE conta_id = $1 AND dia >= $3 AND dia < $4",
    )
    .bind(c.conta.0)
    .bind(c.dia)
    .bind(inicio)
    .bind(fim)
    .fetch_one(&mut **tx)
    .await?;
    Ok((cobradas_hoje.unsigned_abs(), Centavos(gasto_mes)))
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
        let saldo = saldo.map(Centavos);
        let linha = Linha {
            conta: r.conta,
            endpoint: r.endpoint,
            chave: r.chave.as_deref(),
            status: r.status,
            valor: Centavos::ZERO,
            saldo_antes: saldo,
            saldo_depois: saldo,
            em: r.em,
        };
        inserir_consulta(&mut tx, linha).await?;
        contar(
            &mut tx,
            r.conta,
            r.dia,
            false,
            r.status != 200,
            Centavos::ZERO,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query("SELECT * FROM contas WHERE id = $1 FOR UPDATE")
            .bind(c.conta.0)
            .fetch_one(&mut *tx)
            .await?;
        let conta = conta_de(&row)?;
        let (cobradas_hoje, gasto_mes) = contadores(&mut tx, &c).await?;
        let estado = EstadoCobranca {
            saldo: conta.saldo,
            legado: conta.legado,
            limite_diario: conta.limite_diario,
            limite_mensal: conta.limite_mensal,
            cobradas_hoje,
            gasto_mes,
        };
        let linha = |status, valor, depois| Linha {
            conta: c.conta,
            endpoint: c.endpoint,
            chave: Some(&c.chave),
            status,
            valor,
            saldo_antes: Some(conta.saldo),
            saldo_depois: Some(depois),
            em: c.em,
        };
        let preco = match regras::decidir(&estado, c.precos()) {
            Decisao::Debitar { preco } => preco,
            Decisao::Recusar { status, resultado } => {
                inserir_consulta(&mut tx, linha(status, Centavos::ZERO, conta.saldo)).await?;
                contar(&mut tx, c.conta, c.dia, false, true, Centavos::ZERO).await?;
                tx.commit().await?;
                return Ok(resultado);
            }
        };

        let debitou = sqlx::query(
        "UPDATE contas SET saldo_centavos = saldo_centavos - $1 WHERE id = $2 AND saldo_centavos >= $1",
    )
    .bind(preco.0)
    .bind(c.conta.0)
    .execute(&mut *tx)
    .await?
    .rows_affected();
        if debitou != 1 {
            // Cannot happen while the row is locked; refuse rather than go negative.
            tx.rollback().await?;
            return Err(corrupt("saldo mudou durante a transação"));
        }
        let saldo_depois = conta.saldo - preco;
        let id = inserir_consulta(&mut tx, linha(200, preco, saldo_depois)).await?;
        if preco.0 > 0 {
            sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em)
             VALUES ($1, 'debito', $2, 'consulta', $3, $4)",
        )
        .bind(c.conta.0)
        .bind(preco.0)
        .bind(id.to_string())
        .bind(c.em)
        .execute(&mut *tx)
        .await?;
        }
        contar(&mut tx, c.conta, c.dia, true, false, preco).await?;
        let cache = match &c.consolidar {
            Some(codigo) => consolidar(&mut tx, codigo, c.em).await?,
            None => false,
        };
        tx.commit().await?;
        Ok(ResultadoCobranca::Cobrada {
            valor: preco,
            saldo_antes: conta.saldo,
            saldo_depois,
            cache,
        })
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
