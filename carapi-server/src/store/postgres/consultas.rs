//! Lookups: the charge transaction, the uncharged record, the day's counters, history and usage.
//!
//! A charge locks its account row (`SELECT ... FOR UPDATE`) before reading the limit counters
//! and the balance, so charges of one account run one after another while other accounts are
//! not blocked; the debit itself is still conditional (`WHERE saldo_centavos >= price`) and
//! its row count checked.

use carapi_sdk::EndpointConsulta;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgPool, Postgres, Transaction};

use super::linhas::{conta_de, corrupt, mes_de};
use crate::money::Centavos;
use crate::store::{
    Cobranca, ContaId, RegistroConsulta, ResultadoCobranca, StoreError, UsoPeriodo,
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

async fn inserir_consulta(tx: &mut Tx, l: Linha<'_>) -> Result<i64, StoreError> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO consultas (conta_id, data, endpoint, chave, status_http, cobrado, valor_centavos, saldo_antes, saldo_depois)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
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

pub(super) async fn registrar_consulta(
    pool: &PgPool,
    r: RegistroConsulta,
) -> Result<(), StoreError> {
    let mut tx = pool.begin().await?;
    let saldo: Option<i64> = sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = $1")
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

pub(super) async fn cobrar_consulta(
    pool: &PgPool,
    c: Cobranca,
) -> Result<ResultadoCobranca, StoreError> {
    let mut tx = pool.begin().await?;
    let row = sqlx::query("SELECT * FROM contas WHERE id = $1 FOR UPDATE")
        .bind(c.conta.0)
        .fetch_one(&mut *tx)
        .await?;
    let conta = conta_de(&row)?;
    let preco = if conta.legado {
        c.preco_legado
    } else {
        c.preco_atual
    };
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
    .fetch_one(&mut *tx)
    .await?;

    let recusa = if let Some(limite) = conta
        .limite_diario
        .filter(|l| cobradas_hoje >= i64::from(*l))
    {
        Some((429, ResultadoCobranca::LimiteDiario { limite }))
    } else if let Some(limite) = conta.limite_mensal.filter(|l| gasto_mes + preco.0 > l.0) {
        let gasto = Centavos(gasto_mes);
        Some((429, ResultadoCobranca::LimiteMensal { limite, gasto }))
    } else if conta.saldo < preco {
        let saldo = conta.saldo;
        Some((402, ResultadoCobranca::SaldoInsuficiente { saldo, preco }))
    } else {
        None
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
    if let Some((status, resultado)) = recusa {
        inserir_consulta(&mut tx, linha(status, Centavos::ZERO, conta.saldo)).await?;
        contar(&mut tx, c.conta, c.dia, false, true, Centavos::ZERO).await?;
        tx.commit().await?;
        return Ok(resultado);
    }

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
    let mut cache = false;
    if let Some(codigo) = &c.consolidar {
        // Locks the record row too: two first lookups of one code cannot both see "new".
        let antes: Option<Option<DateTime<Utc>>> = sqlx::query_scalar(
            "SELECT consolidado_em FROM imoveis WHERE codigo_car = $1 FOR UPDATE",
        )
        .bind(codigo.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        cache = matches!(antes, Some(Some(_)));
        if matches!(antes, Some(None)) {
            sqlx::query("UPDATE imoveis SET consolidado_em = $1 WHERE codigo_car = $2")
                .bind(c.em)
                .bind(codigo.as_str())
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(ResultadoCobranca::Cobrada {
        valor: preco,
        saldo_antes: conta.saldo,
        saldo_depois,
        cache,
    })
}

pub(super) async fn uso_periodo(
    pool: &PgPool,
    conta: ContaId,
    dia: NaiveDate,
) -> Result<UsoPeriodo, StoreError> {
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
    .fetch_one(pool)
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
