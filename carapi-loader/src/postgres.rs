//! The PostgreSQL bulk writer: each batch goes by `COPY ... FROM STDIN` (text format) into
//! temporary staging tables, then into `imoveis` and `imovel_proprietarios` with a few
//! set-based statements, in one transaction per batch.
//!
//! Within a batch the staging rows are first reduced to the newest version of each code, then
//! upserted with the same version rule as SQLite ([`super::wfs::newest`]); only the records
//! actually written get their owners replaced.

use indicatif::ProgressBar;
use sqlx::{Connection, PgConnection, Row};
use tokio::sync::mpsc;

use super::{LoadCount, LoadError};
use carapi_service::dados::Imovel;

/// The tables a load writes; their secondary indexes are rebuilt after a load into an empty base.
const TABLES: [&str; 2] = ["imoveis", "imovel_proprietarios"];

const COLUMNS: &str = "codigo_car, status_imovel, condicao, nome_imovel, area_total_ha,
    modulos_fiscais, data_cadastro, data_atualizacao, tipo_imovel, municipio,
    codigo_municipio_ibge, uf, codigo_protocolo, latitude, longitude, matricula_numero,
    matricula_data, matricula_cartorio, tem_recibo";

const STAGING: &str = "
CREATE TEMPORARY TABLE IF NOT EXISTS carga_imoveis (
    seq BIGINT NOT NULL, codigo_car TEXT COLLATE \"C\" NOT NULL, status_imovel TEXT NOT NULL,
    condicao TEXT, nome_imovel TEXT, area_total_ha NUMERIC NOT NULL, modulos_fiscais NUMERIC,
    data_cadastro TIMESTAMP NOT NULL, data_atualizacao TIMESTAMP, tipo_imovel TEXT NOT NULL,
    municipio TEXT NOT NULL, codigo_municipio_ibge BIGINT NOT NULL, uf TEXT NOT NULL,
    codigo_protocolo TEXT, latitude NUMERIC, longitude NUMERIC, matricula_numero TEXT,
    matricula_data TEXT, matricula_cartorio TEXT, tem_recibo BOOLEAN NOT NULL
) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS carga_proprietarios (
    seq BIGINT NOT NULL, ordem BIGINT NOT NULL, documento TEXT NOT NULL, nome TEXT NOT NULL
) ON COMMIT DELETE ROWS;
CREATE TEMPORARY TABLE IF NOT EXISTS carga_gravados (
    codigo_car TEXT COLLATE \"C\" NOT NULL, novo BOOLEAN NOT NULL
) ON COMMIT DELETE ROWS;";

/// Keeps, per code, only the newest version of the batch (the later `seq` on a tie).
const ONLY_THE_NEWEST: &str = "DELETE FROM carga_imoveis a USING carga_imoveis b
  WHERE a.codigo_car = b.codigo_car AND a.seq <> b.seq
    AND (COALESCE(b.data_atualizacao, '-infinity'), b.data_cadastro, b.seq)
      > (COALESCE(a.data_atualizacao, '-infinity'), a.data_cadastro, a.seq)";

const DELETE_OWNERS: &str = "DELETE FROM imovel_proprietarios p USING carga_gravados g
  WHERE p.codigo_car = g.codigo_car AND NOT g.novo";

const INSERT_OWNERS: &str = "INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome)
  SELECT i.codigo_car, p.ordem, p.documento, p.nome
  FROM carga_proprietarios p JOIN carga_imoveis i USING (seq)
  JOIN carga_gravados g ON g.codigo_car = i.codigo_car";

/// The upsert of the staged records: new ones inserted, stored ones replaced unless newer.
fn upsert() -> String {
    let update = COLUMNS
        .split(',')
        .map(str::trim)
        .filter(|c| *c != "codigo_car")
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "WITH g AS (
           INSERT INTO imoveis ({COLUMNS}) SELECT {COLUMNS} FROM carga_imoveis
           ON CONFLICT (codigo_car) DO UPDATE SET {update}
           WHERE (COALESCE(excluded.data_atualizacao, '-infinity'), excluded.data_cadastro)
              >= (COALESCE(imoveis.data_atualizacao, '-infinity'), imoveis.data_cadastro)
           RETURNING codigo_car, (xmax = 0) AS novo)
         INSERT INTO carga_gravados SELECT codigo_car, novo FROM g"
    )
}

/// Writes every batch received on `rx` into the PostgreSQL database of `url` (already
/// migrated).
pub(super) async fn write(
    url: &str,
    mut rx: mpsc::Receiver<Vec<Imovel>>,
    bar: &ProgressBar,
) -> Result<LoadCount, LoadError> {
    let mut conn = PgConnection::connect(url).await?;
    sqlx::raw_sql(STAGING).execute(&mut conn).await?;
    let empty: bool = sqlx::query_scalar("SELECT NOT EXISTS (SELECT 1 FROM imoveis)")
        .fetch_one(&mut conn)
        .await?;
    let indices = if empty {
        drop_indexes(&mut conn).await?
    } else {
        Vec::new()
    };
    let mut counters = LoadCount {
        indices: indices.len(),
        ..LoadCount::default()
    };
    let upsert = upsert();
    let mut r = Ok(());
    while let Some(batch) = rx.recv().await {
        r = write_batch(&mut conn, &upsert, &batch, &mut counters).await;
        if r.is_err() {
            break;
        }
        bar.inc(batch.len() as u64);
    }
    bar.set_message("índices");
    let redone = rebuild_indexes(&mut conn, &indices).await;
    r?;
    redone?;
    sqlx::query("ANALYZE imoveis, imovel_proprietarios")
        .execute(&mut conn)
        .await?;
    Ok(counters)
}

/// Drops the secondary indexes of [`TABLES`] (not those backing a primary key or a unique
/// constraint), returning their definitions.
async fn drop_indexes(conn: &mut PgConnection) -> Result<Vec<(String, String)>, LoadError> {
    let mut tx = conn.begin().await?;
    let indices: Vec<(String, String)> = sqlx::query(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i
         WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                           WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)
         ORDER BY i.indexname",
    )
    .bind(&TABLES[..])
    .fetch_all(&mut *tx)
    .await?
    .iter()
    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
    .collect::<Result<_, sqlx::Error>>()?;
    for (name, _) in &indices {
        sqlx::raw_sql(&format!("DROP INDEX \"{}\"", name.replace('"', "\"\"")))
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(indices)
}

async fn rebuild_indexes(
    conn: &mut PgConnection,
    indices: &[(String, String)],
) -> Result<(), LoadError> {
    for (_, sql) in indices {
        sqlx::raw_sql(sql).execute(&mut *conn).await?;
    }
    Ok(())
}

async fn write_batch(
    conn: &mut PgConnection,
    upsert: &str,
    batch: &[Imovel],
    counters: &mut LoadCount,
) -> Result<(), LoadError> {
    let (imoveis, owners) = copy_text(batch);
    let mut tx = conn.begin().await?;
    let mut copy = tx
        .copy_in_raw(&format!("COPY carga_imoveis (seq, {COLUMNS}) FROM STDIN"))
        .await?;
    copy.send(imoveis.as_bytes()).await?;
    copy.finish().await?;
    let mut copy = tx
        .copy_in_raw("COPY carga_proprietarios (seq, ordem, documento, nome) FROM STDIN")
        .await?;
    copy.send(owners.as_bytes()).await?;
    copy.finish().await?;
    sqlx::query(ONLY_THE_NEWEST).execute(&mut *tx).await?;
    let written = sqlx::query(upsert).execute(&mut *tx).await?.rows_affected();
    sqlx::query(DELETE_OWNERS).execute(&mut *tx).await?;
    sqlx::query(INSERT_OWNERS).execute(&mut *tx).await?;
    tx.commit().await?;
    counters.written += written;
    counters.ignored += batch.len() as u64 - written;
    Ok(())
}

/// The batch in `COPY` text format: the records' rows (`seq` first) and their owners' rows.
fn copy_text(batch: &[Imovel]) -> (String, String) {
    let mut imoveis = String::with_capacity(batch.len() * 400);
    let mut owners = String::with_capacity(batch.len() * 120);
    for (seq, i) in batch.iter().enumerate() {
        let data = |d: chrono::NaiveDateTime| d.format("%Y-%m-%d %H:%M:%S%.f").to_string();
        let fields: [Option<String>; 20] = [
            Some(seq.to_string()),
            Some(i.codigo_car.to_string()),
            Some(i.status_imovel.to_string()),
            i.condicao.clone(),
            i.nome_imovel.clone(),
            Some(i.area_total_ha.to_string()),
            i.modulos_fiscais.map(|d| d.to_string()),
            Some(data(i.data_cadastro)),
            i.data_atualizacao.map(data),
            Some(i.tipo_imovel.to_string()),
            Some(i.municipio.clone()),
            Some(i.codigo_municipio_ibge.to_string()),
            Some(i.uf.to_string()),
            i.codigo_protocolo.clone(),
            i.latitude.map(|d| d.to_string()),
            i.longitude.map(|d| d.to_string()),
            i.matricula_numero.clone(),
            i.matricula_data.clone(),
            i.matricula_cartorio.clone(),
            Some(if i.has_recibo { "t" } else { "f" }.to_owned()),
        ];
        copy_row(&mut imoveis, &fields);
        for (order, p) in i.proprietarios.iter().enumerate() {
            copy_row(
                &mut owners,
                &[
                    Some(seq.to_string()),
                    Some(order.to_string()),
                    Some(p.documento.as_str().to_owned()),
                    Some(p.nome.clone()),
                ],
            );
        }
    }
    (imoveis, owners)
}

/// Appends one row: tab-separated, `\N` for NULL, backslash, tab, newline and carriage return
/// escaped (PostgreSQL `COPY` text format).
fn copy_row(output: &mut String, fields: &[Option<String>]) {
    for (n, field) in fields.iter().enumerate() {
        if n > 0 {
            output.push('\t');
        }
        match field {
            None => output.push_str("\\N"),
            Some(v) => {
                for ch in v.chars() {
                    match ch {
                        '\\' => output.push_str("\\\\"),
                        '\t' => output.push_str("\\t"),
                        '\n' => output.push_str("\\n"),
                        '\r' => output.push_str("\\r"),
                        c => output.push(c),
                    }
                }
            }
        }
    }
    output.push('\n');
}
