//! The SQLite bulk writer: its own rusqlite connection (the same libsqlite3-sys as sqlx), one
//! prepared statement per table and operation, one `BEGIN IMMEDIATE` transaction per batch.
//!
//! Rows are written in the encoding the store reads back (`store/sqlite/linhas.rs`): decimals
//! as text with a dot, date-times as `YYYY-MM-DD HH:MM:SS` (Brasília wall time), booleans as
//! 0/1.

use std::str::FromStr;
use std::time::Duration;

use indicatif::ProgressBar;
use rusqlite::{CachedStatement, Connection, OptionalExtension, TransactionBehavior, params};
use sqlx::sqlite::SqliteConnectOptions;
use tokio::sync::mpsc;

use super::ordenar::Valor;
use super::{CargaError, Contagem};
use crate::dados::Imovel;

/// The store's date-time encoding (`store/sqlite/linhas.rs`, `DATA_HORA`).
const DATA_HORA: &str = "%Y-%m-%d %H:%M:%S";

/// Page cache of the bulk connection, KiB (bounds the writer's memory; also the budget of each
/// of SQLite's sorters, which the indexes' rebuild uses). With [`super::LOTE`]-sized batches
/// in flight and an empty base's sort buffer ([`super::ordenar`]) it keeps a load under
/// 200 MB whatever its size.
const CACHE_KIB: i64 = 32 * 1024;

/// The tables a load writes; their secondary indexes are rebuilt after a load into an empty base.
const TABELAS: [&str; 2] = ["imoveis", "imovel_proprietarios"];

/// The columns of `imoveis` a load writes, in the order of [`valores_de`].
pub(super) const COLUNAS: &str = "codigo_car, status_imovel, condicao, nome_imovel,
    area_total_ha, modulos_fiscais, data_cadastro, data_atualizacao, tipo_imovel, municipio,
    codigo_municipio_ibge, uf, codigo_protocolo, latitude, longitude, matricula_numero,
    matricula_data, matricula_cartorio, tem_recibo";

const INSERIR: &str = "INSERT INTO imoveis (codigo_car, status_imovel, condicao, nome_imovel,
    area_total_ha, modulos_fiscais, data_cadastro, data_atualizacao, tipo_imovel, municipio,
    codigo_municipio_ibge, uf, codigo_protocolo, latitude, longitude, matricula_numero,
    matricula_data, matricula_cartorio, tem_recibo)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
  ON CONFLICT (codigo_car) DO NOTHING";

/// Replaces a stored record unless it is newer ([`super::wfs::mais_nova`]: `data_atualizacao`,
/// a missing one the oldest, then `data_cadastro`; a tie replaces).
const SUBSTITUIR: &str = "UPDATE imoveis SET status_imovel = ?2, condicao = ?3, nome_imovel = ?4,
    area_total_ha = ?5, modulos_fiscais = ?6, data_cadastro = ?7, data_atualizacao = ?8,
    tipo_imovel = ?9, municipio = ?10, codigo_municipio_ibge = ?11, uf = ?12,
    codigo_protocolo = ?13, latitude = ?14, longitude = ?15, matricula_numero = ?16,
    matricula_data = ?17, matricula_cartorio = ?18, tem_recibo = ?19
  WHERE codigo_car = ?1
    AND (COALESCE(?8, '') > COALESCE(data_atualizacao, '')
      OR (COALESCE(?8, '') = COALESCE(data_atualizacao, '') AND ?7 >= data_cadastro))";

const APAGAR_DONOS: &str = "DELETE FROM imovel_proprietarios WHERE codigo_car = ?1";

const INSERIR_DONO: &str =
    "INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome) VALUES (?1, ?2, ?3, ?4)";

/// The file of a SQLite URL, parsed as the store parses it.
///
/// # Errors
/// [`CargaError::Url`] for an in-memory database (nothing would outlive the load) or a URL
/// that does not parse.
pub fn arquivo_do_url(url: &str) -> Result<std::path::PathBuf, CargaError> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Err(CargaError::Url(format!(
            "{url}: um banco em memória não guarda a carga; use sqlite://ARQUIVO"
        )));
    }
    let opts =
        SqliteConnectOptions::from_str(url).map_err(|e| CargaError::Url(format!("{url}: {e}")))?;
    Ok(opts.get_filename().to_path_buf())
}

/// Writes every batch received on `rx` into the SQLite database of `url` (already migrated).
pub(super) fn gravar(
    url: &str,
    mut rx: mpsc::Receiver<Vec<Imovel>>,
    barra: &ProgressBar,
) -> Result<Contagem, CargaError> {
    let mut conn = abrir(url)?;
    let vazio = conn
        .query_row("SELECT 1 FROM imoveis LIMIT 1", [], |_| Ok(()))
        .optional()?
        .is_none();
    let indices = if vazio {
        derrubar_indices(&mut conn)?
    } else {
        Vec::new()
    };
    let mut contagem = Contagem {
        indices: indices.len(),
        ..Contagem::default()
    };
    let r = if vazio {
        super::sqlite_vazio::gravar(&mut conn, &mut rx, barra, &mut contagem)
    } else {
        (|| {
            while let Some(lote) = rx.blocking_recv() {
                gravar_lote(&mut conn, &lote, &mut contagem)?;
                barra.inc(lote.len() as u64);
            }
            Ok::<_, CargaError>(())
        })()
    };
    // Rebuilt even after an error, so that a failed load leaves the schema whole.
    barra.set_message("índices");
    let refeitos = recriar_indices(&mut conn, &indices);
    r?;
    refeitos?;
    conn.execute_batch("PRAGMA optimize; PRAGMA wal_checkpoint(TRUNCATE);")?;
    Ok(contagem)
}

fn abrir(url: &str) -> Result<Connection, CargaError> {
    let conn = Connection::open(arquivo_do_url(url)?)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    // Foreign keys off: a record's row is always written before its owners' rows.
    conn.execute_batch(&format!(
        "PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -{CACHE_KIB};"
    ))?;
    Ok(conn)
}

/// Drops the secondary indexes of [`TABELAS`] (those with an SQL definition: not the primary
/// keys'), returning their definitions.
fn derrubar_indices(conn: &mut Connection) -> Result<Vec<(String, String)>, CargaError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let indices: Vec<(String, String)> = {
        let mut st = tx.prepare(
            "SELECT name, sql FROM sqlite_master
             WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (?1, ?2) ORDER BY name",
        )?;
        st.query_map(params![TABELAS[0], TABELAS[1]], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?
    };
    for (nome, _) in &indices {
        tx.execute_batch(&format!("DROP INDEX \"{}\"", nome.replace('"', "\"\"")))?;
    }
    tx.commit()?;
    Ok(indices)
}

fn recriar_indices(conn: &mut Connection, indices: &[(String, String)]) -> Result<(), CargaError> {
    if indices.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for (_, sql) in indices {
        tx.execute_batch(sql)?;
    }
    tx.commit()?;
    Ok(())
}

/// The prepared statements of one batch.
struct Comandos<'c> {
    inserir: CachedStatement<'c>,
    substituir: CachedStatement<'c>,
    apagar_donos: CachedStatement<'c>,
    inserir_dono: CachedStatement<'c>,
}

fn gravar_lote(
    conn: &mut Connection,
    lote: &[Imovel],
    contagem: &mut Contagem,
) -> Result<(), CargaError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut c = Comandos {
            inserir: tx.prepare_cached(INSERIR)?,
            substituir: tx.prepare_cached(SUBSTITUIR)?,
            apagar_donos: tx.prepare_cached(APAGAR_DONOS)?,
            inserir_dono: tx.prepare_cached(INSERIR_DONO)?,
        };
        // In code order, so that consecutive inserts hit neighbouring index pages; the sort
        // is stable, so two versions of one code keep their file order.
        let mut ordem: Vec<&Imovel> = lote.iter().collect();
        ordem.sort_by(|a, b| a.codigo_car.as_str().cmp(b.codigo_car.as_str()));
        for i in ordem {
            if gravar_um(&mut c, i)? {
                contagem.gravados += 1;
            } else {
                contagem.ignorados += 1;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// The values of [`COLUNAS`] for `i`, in the store's encoding.
pub(super) fn valores_de(i: &Imovel) -> [Valor; 19] {
    let data = |d: chrono::NaiveDateTime| Valor::Texto(d.format(DATA_HORA).to_string());
    let texto = |t: Option<&String>| t.map_or(Valor::Nulo, |t| Valor::Texto(t.clone()));
    let decimal =
        |d: Option<rust_decimal::Decimal>| d.map_or(Valor::Nulo, |d| Valor::Texto(d.to_string()));
    [
        Valor::Texto(i.codigo_car.as_str().to_owned()),
        Valor::Texto(i.status_imovel.clone()),
        texto(i.condicao.as_ref()),
        texto(i.nome_imovel.as_ref()),
        Valor::Texto(i.area_total_ha.to_string()),
        decimal(i.modulos_fiscais),
        data(i.data_cadastro),
        i.data_atualizacao.map_or(Valor::Nulo, data),
        Valor::Texto(i.tipo_imovel.clone()),
        Valor::Texto(i.municipio.clone()),
        Valor::Inteiro(i64::from(i.codigo_municipio_ibge)),
        Valor::Texto(i.uf.clone()),
        texto(i.codigo_protocolo.as_ref()),
        decimal(i.latitude),
        decimal(i.longitude),
        texto(i.matricula_numero.as_ref()),
        texto(i.matricula_data.as_ref()),
        texto(i.matricula_cartorio.as_ref()),
        Valor::Inteiro(i64::from(i.tem_recibo)),
    ]
}

/// Writes one record and its owners; false when a newer version is already stored.
fn gravar_um(c: &mut Comandos<'_>, i: &Imovel) -> Result<bool, CargaError> {
    let codigo = i.codigo_car.as_str();
    let v = valores_de(i);
    let valores = rusqlite::params_from_iter(v.iter());
    if c.inserir.execute(valores.clone())? == 0 {
        if c.substituir.execute(valores)? == 0 {
            return Ok(false);
        }
        c.apagar_donos.execute([codigo])?;
    }
    for (ordem, p) in i.proprietarios.iter().enumerate() {
        c.inserir_dono
            .execute(params![codigo, ordem as i64, p.documento.as_str(), p.nome])?;
    }
    Ok(true)
}
