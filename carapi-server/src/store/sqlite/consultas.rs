//! Lookups: the charge transaction, the uncharged record, the day's counters, history and usage.
//!
//! On a database file, [`registrar_consulta`] and [`cobrar_consulta`] hand over to the lookup
//! writer thread ([`super::escritor`]); the transactions here serve the in-memory database.

use carapi_sdk::{EndpointConsulta, StatusConsulta};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{Row, Sqlite, Transaction};

use super::SqliteStore;
use super::linhas::{conta_de, corrupt, instante, ms, primeiro_dia_mes};
use crate::money::Centavos;
use crate::store::{
    Cobranca, ConsultaRegistrada, ContaId, FiltroHistorico, RegistroConsulta, ResultadoCobranca,
    StoreError, UsoEndpoint, UsoPeriodo,
};

/// Adds one lookup to the day's counters (same transaction as its history row).
async fn contar(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
    dia: NaiveDate,
    cobrada: bool,
    erro: bool,
    gasto: Centavos,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO uso_diario (conta_id, dia, requisicoes, cobradas, erros, gasto_centavos) VALUES (?, ?, 1, ?, ?, ?)
         ON CONFLICT (conta_id, dia) DO UPDATE SET requisicoes = requisicoes + 1,
           cobradas = cobradas + excluded.cobradas, erros = erros + excluded.erros,
           gasto_centavos = gasto_centavos + excluded.gasto_centavos",
    )
    .bind(conta.0)
    .bind(dia.to_string())
    .bind(i64::from(cobrada))
    .bind(i64::from(erro))
    .bind(gasto.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn inserir_consulta(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
    endpoint: EndpointConsulta,
    chave: Option<&str>,
    status: u16,
    valor: Centavos,
    saldo_antes: Option<Centavos>,
    saldo_depois: Option<Centavos>,
    em: DateTime<Utc>,
) -> Result<i64, StoreError> {
    let r = sqlx::query(
        "INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado, valor_centavos, saldo_antes, saldo_depois)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(conta.0)
    .bind(ms(em))
    .bind(endpoint.as_str())
    .bind(chave)
    .bind(i64::from(status))
    .bind(i64::from(valor.0 > 0))
    .bind(valor.0)
    .bind(saldo_antes.map(|c| c.0))
    .bind(saldo_depois.map(|c| c.0))
    .execute(&mut **tx)
    .await?;
    Ok(r.last_insert_rowid())
}

async fn saldo_em_tx(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
) -> Result<Option<Centavos>, StoreError> {
    let v: Option<i64> = sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = ?")
        .bind(conta.0)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(v.map(Centavos))
}

pub(super) async fn registrar_consulta(
    store: &SqliteStore,
    r: RegistroConsulta,
) -> Result<(), StoreError> {
    if let Some(escritor) = &store.escritor {
        return escritor.registrar(r).await;
    }
    let mut tx = store.imediata().await?;
    let saldo = saldo_em_tx(&mut tx, r.conta).await?;
    inserir_consulta(
        &mut tx,
        r.conta,
        r.endpoint,
        r.chave.as_deref(),
        r.status,
        Centavos::ZERO,
        saldo,
        saldo,
        r.em,
    )
    .await?;
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
    store: &SqliteStore,
    c: Cobranca,
) -> Result<ResultadoCobranca, StoreError> {
    if let Some(escritor) = &store.escritor {
        return escritor.cobrar(c).await;
    }
    let mut tx = store.imediata().await?;
    let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
        .bind(c.conta.0)
        .fetch_one(&mut *tx)
        .await?;
    let conta = conta_de(&row)?;
    let preco = if conta.legado {
        c.preco_legado
    } else {
        c.preco_atual
    };
    let hoje: Option<(i64,)> =
        sqlx::query_as("SELECT cobradas FROM uso_diario WHERE conta_id = ? AND dia = ?")
            .bind(c.conta.0)
            .bind(c.dia.to_string())
            .fetch_optional(&mut *tx)
            .await?;
    let cobradas_hoje = hoje.map_or(0, |h| h.0);
    let (inicio, fim) = primeiro_dia_mes(c.dia);
    let gasto_mes: i64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(gasto_centavos), 0) FROM uso_diario WHERE conta_id = ? AND dia >= ? AND dia < ?",
    )
    .bind(c.conta.0)
    .bind(&inicio)
    .bind(&fim)
    .fetch_one(&mut *tx)
    .await?;

    let recusa = if let Some(limite) = conta
        .limite_diario
        .filter(|l| cobradas_hoje >= i64::from(*l))
    {
        Some((429, ResultadoCobranca::LimiteDiario { limite }))
    } else if let Some(limite) = conta.limite_mensal.filter(|l| gasto_mes + preco.0 > l.0) {
        Some((
            429,
            ResultadoCobranca::LimiteMensal {
                limite,
                gasto: Centavos(gasto_mes),
            },
        ))
    } else if conta.saldo < preco {
        Some((
            402,
            ResultadoCobranca::SaldoInsuficiente {
                saldo: conta.saldo,
                preco,
            },
        ))
    } else {
        None
    };
    if let Some((status, resultado)) = recusa {
        let s = Some(conta.saldo);
        inserir_consulta(
            &mut tx,
            c.conta,
            c.endpoint,
            Some(&c.chave),
            status,
            Centavos::ZERO,
            s,
            s,
            c.em,
        )
        .await?;
        contar(&mut tx, c.conta, c.dia, false, true, Centavos::ZERO).await?;
        tx.commit().await?;
        return Ok(resultado);
    }

    let debitou = sqlx::query("UPDATE contas SET saldo_centavos = saldo_centavos - ? WHERE id = ? AND saldo_centavos >= ?")
        .bind(preco.0)
        .bind(c.conta.0)
        .bind(preco.0)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if debitou != 1 {
        // Cannot happen under BEGIN IMMEDIATE; refuse rather than go negative.
        tx.rollback().await?;
        return Err(corrupt("saldo mudou durante a transação"));
    }
    let saldo_depois = conta.saldo - preco;
    let id = inserir_consulta(
        &mut tx,
        c.conta,
        c.endpoint,
        Some(&c.chave),
        200,
        preco,
        Some(conta.saldo),
        Some(saldo_depois),
        c.em,
    )
    .await?;
    if preco.0 > 0 {
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'debito', ?, 'consulta', ?, ?)",
        )
        .bind(c.conta.0)
        .bind(preco.0)
        .bind(id.to_string())
        .bind(ms(c.em))
        .execute(&mut *tx)
        .await?;
    }
    contar(&mut tx, c.conta, c.dia, true, false, preco).await?;
    let mut cache = false;
    if let Some(codigo) = &c.consolidar {
        let antes: Option<Option<i64>> =
            sqlx::query_scalar("SELECT consolidado_em FROM imoveis WHERE codigo_car = ?")
                .bind(codigo.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        cache = matches!(antes, Some(Some(_)));
        if matches!(antes, Some(None)) {
            sqlx::query("UPDATE imoveis SET consolidado_em = ? WHERE codigo_car = ?")
                .bind(ms(c.em))
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
