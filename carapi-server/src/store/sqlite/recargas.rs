//! Top-ups (reuse, listing, the exactly-once confirmation) and the simulated PSP's book.

use carapi_sdk::{CpfCnpj, RecargaStatus};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::SqliteStore;
use super::linhas::{COLUNAS_RECARGA, instante, ms, recarga_de};
use crate::money::Centavos;
use crate::store::historico::sem_nul;
use crate::store::{CobrancaPsp, Confirmacao, ContaId, PRAZO_CRIACAO_S, Recarga, StoreError};

pub(super) async fn recarga_reaproveitavel(
    store: &SqliteStore,
    conta: ContaId,
    valor: Centavos,
    desde: DateTime<Utc>,
) -> Result<Option<Recarga>, StoreError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
         AND criada_em >= ? AND qr_code <> '' ORDER BY criada_em DESC LIMIT 1"
    ))
    .bind(conta.0)
    .bind(valor.0)
    .bind(ms(desde))
    .fetch_optional(&store.leitura)
    .await?;
    row.as_ref().map(recarga_de).transpose()
}

pub(super) async fn inserir_recarga(
    store: &SqliteStore,
    nova: Recarga,
    desde: DateTime<Utc>,
) -> Result<(Recarga, bool), StoreError> {
    let mut tx = store.imediata().await?;
    let abandono = nova.criada_em - chrono::Duration::seconds(PRAZO_CRIACAO_S);
    let existente = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
         AND criada_em >= ? AND (qr_code <> '' OR criada_em >= ?) ORDER BY criada_em DESC LIMIT 1"
    ))
    .bind(nova.conta.0)
    .bind(nova.valor.0)
    .bind(ms(desde))
    .bind(ms(abandono))
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(row) = existente {
        tx.commit().await?;
        return Ok((recarga_de(&row)?, true));
    }
    sqlx::query(&format!(
        "INSERT INTO recargas ({COLUNAS_RECARGA}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ))
    .bind(nova.id.to_string())
    .bind(nova.conta.0)
    .bind(&nova.payment_id)
    .bind(nova.valor.0)
    .bind(i64::from(nova.percentual_bonus))
    .bind(nova.bonus.0)
    .bind(nova.status.as_str())
    .bind(&nova.qr_code)
    .bind(ms(nova.criada_em))
    .bind(nova.confirmada_em.map(ms))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok((nova, false))
}

pub(super) async fn recarga(
    store: &SqliteStore,
    conta: ContaId,
    id: Uuid,
) -> Result<Option<Recarga>, StoreError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ? AND conta_id = ? AND qr_code <> ''"
    ))
    .bind(id.to_string())
    .bind(conta.0)
    .fetch_optional(&store.leitura)
    .await?;
    row.as_ref().map(recarga_de).transpose()
}

pub(super) async fn recarga_por_id(
    store: &SqliteStore,
    id: Uuid,
) -> Result<Option<Recarga>, StoreError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ?"
    ))
    .bind(id.to_string())
    .fetch_optional(&store.leitura)
    .await?;
    row.as_ref().map(recarga_de).transpose()
}

pub(super) async fn recargas(
    store: &SqliteStore,
    conta: ContaId,
    status: Option<RecargaStatus>,
    page: u32,
    size: u32,
) -> Result<(Vec<Recarga>, u64), StoreError> {
    let filtro = if status.is_some() {
        " AND status = ?"
    } else {
        ""
    };
    let sql_total =
        format!("SELECT COUNT(*) FROM recargas WHERE conta_id = ? AND qr_code <> ''{filtro}");
    let mut q = sqlx::query_scalar(&sql_total).bind(conta.0);
    if let Some(s) = status {
        q = q.bind(s.as_str());
    }
    let total: i64 = q.fetch_one(&store.leitura).await?;
    let sql = format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND qr_code <> ''{filtro} ORDER BY criada_em DESC, rowid DESC LIMIT ? OFFSET ?"
    );
    let mut q = sqlx::query(&sql).bind(conta.0);
    if let Some(s) = status {
        q = q.bind(s.as_str());
    }
    let rows = q
        .bind(i64::from(size))
        .bind(i64::from(page.max(1) - 1) * i64::from(size))
        .fetch_all(&store.leitura)
        .await?;
    let itens = rows.iter().map(recarga_de).collect::<Result<Vec<_>, _>>()?;
    Ok((itens, total as u64))
}

pub(super) async fn recargas_pendentes(
    store: &SqliteStore,
    limite: u32,
) -> Result<Vec<Recarga>, StoreError> {
    let rows = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE status = 'Pendente' AND qr_code <> '' ORDER BY criada_em LIMIT ?"
    ))
    .bind(i64::from(limite))
    .fetch_all(&store.leitura)
    .await?;
    rows.iter().map(recarga_de).collect()
}

pub(super) async fn confirmar_recarga(
    store: &SqliteStore,
    payment_id: &str,
    em: DateTime<Utc>,
) -> Result<Confirmacao, StoreError> {
    let mut tx = store.imediata().await?;
    let movida = sqlx::query(&format!(
        "UPDATE recargas SET status = 'Confirmado', confirmada_em = ? WHERE payment_id = ? AND status = 'Pendente'
         AND qr_code <> '' RETURNING {COLUNAS_RECARGA}"
    ))
    .bind(ms(em))
    .bind(sem_nul(payment_id))
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = movida else {
        let atual = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = ?"
        ))
        .bind(sem_nul(payment_id))
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        return Ok(match atual {
            Some(r) => Confirmacao::JaFinal(recarga_de(&r)?),
            None => Confirmacao::NaoEncontrada,
        });
    };
    let recarga = recarga_de(&row)?;
    let total = recarga.valor + recarga.bonus;
    sqlx::query("UPDATE contas SET saldo_centavos = saldo_centavos + ?, legado = 0 WHERE id = ?")
        .bind(total.0)
        .bind(recarga.conta.0)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'credito', ?, 'recarga', ?, ?)",
    )
    .bind(recarga.conta.0)
    .bind(total.0)
    .bind(recarga.id.to_string())
    .bind(ms(em))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Confirmacao::Creditada(recarga))
}

pub(super) async fn psp_registrar(
    store: &SqliteStore,
    payment_id: &str,
    valor: Centavos,
    documento: &CpfCnpj,
    email: Option<&str>,
    em: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut tx = store.imediata().await?;
    sqlx::query("INSERT INTO psp_cobrancas (payment_id, valor_centavos, documento, email, criada_em) VALUES (?, ?, ?, ?, ?)")
        .bind(payment_id)
        .bind(valor.0)
        .bind(documento.as_str())
        .bind(email)
        .bind(ms(em))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn psp_pagar(
    store: &SqliteStore,
    payment_id: &str,
    em: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut tx = store.imediata().await?;
    let existe: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM psp_cobrancas WHERE payment_id = ?")
            .bind(sem_nul(payment_id))
            .fetch_optional(&mut *tx)
            .await?;
    if existe.is_some() {
        sqlx::query(
            "UPDATE psp_cobrancas SET paga_em = ? WHERE payment_id = ? AND paga_em IS NULL",
        )
        .bind(ms(em))
        .bind(payment_id)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(existe.is_some())
}

pub(super) async fn psp_situacao(
    store: &SqliteStore,
    payment_id: &str,
) -> Result<Option<CobrancaPsp>, StoreError> {
    let v: Option<(i64, Option<i64>)> =
        sqlx::query_as("SELECT valor_centavos, paga_em FROM psp_cobrancas WHERE payment_id = ?")
            .bind(sem_nul(payment_id))
            .fetch_optional(&store.leitura)
            .await?;
    Ok(v.map(|(valor, paga_em)| CobrancaPsp {
        valor: Centavos(valor),
        paga_em: paga_em.map(instante),
    }))
}

pub(super) async fn recarga_por_payment_id(
    store: &SqliteStore,
    payment_id: &str,
) -> Result<Option<Recarga>, StoreError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = ?"
    ))
    .bind(sem_nul(payment_id))
    .fetch_optional(&store.leitura)
    .await?;
    row.as_ref().map(recarga_de).transpose()
}

pub(super) async fn completar_recarga(
    store: &SqliteStore,
    id: Uuid,
    qr_code: &str,
) -> Result<(), StoreError> {
    let mut tx = store.imediata().await?;
    sqlx::query("UPDATE recargas SET qr_code = ? WHERE id = ? AND qr_code = ''")
        .bind(qr_code)
        .bind(id.to_string())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn descartar_recarga(store: &SqliteStore, id: Uuid) -> Result<(), StoreError> {
    let mut tx = store.imediata().await?;
    sqlx::query("DELETE FROM recargas WHERE id = ? AND qr_code = ''")
        .bind(id.to_string())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
