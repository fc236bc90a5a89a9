//! The SQLite load into an empty base: append every version to constraint-free staging tables
//! in a temporary database, then move the winners into `imoveis` and `imovel_proprietarios`
//! in one sorted `INSERT … SELECT … ORDER BY codigo_car` each.
//!
//! Writing random CAR codes straight into `imoveis` inserts at random places of its primary-key
//! B-tree; past the page cache (a few hundred thousand records) each insert reads pages back
//! and the load slows down without bound. Appending, then inserting in key order, touches
//! each page of the final B-trees once, and SQLite's sorter keeps its memory bounded by the
//! cache size, spilling to temporary files.
//!
//! The winner of a code read more than once is the rule of [`super::wfs::mais_nova`] and of the
//! incremental writer ([`super::sqlite`]): the newest `data_atualizacao` (a missing one the
//! oldest), then the newest `data_cadastro`, and on a tie the version read last.

use indicatif::ProgressBar;
use rusqlite::{Connection, TransactionBehavior, params};
use tokio::sync::mpsc;

use super::sqlite::{COLUNAS, valores_de};
use super::{CargaError, Contagem};
use crate::dados::Imovel;

const PREPARAR: &str = "
DROP TABLE IF EXISTS temp.carga_imoveis;
DROP TABLE IF EXISTS temp.carga_donos;
CREATE TEMP TABLE carga_imoveis AS SELECT * FROM main.imoveis WHERE 0;
CREATE TEMP TABLE carga_donos (seq INTEGER NOT NULL, ordem INTEGER NOT NULL,
    documento TEXT NOT NULL, nome TEXT NOT NULL);";

/// The staged versions that win, one per code, in code order.
const VENCEDORES: &str = "
CREATE TEMP TABLE carga_vencedores AS
SELECT seq, codigo_car FROM (
    SELECT rowid AS seq, codigo_car, ROW_NUMBER() OVER (
        PARTITION BY codigo_car
        ORDER BY COALESCE(data_atualizacao, '') DESC, data_cadastro DESC, rowid DESC) AS n
    FROM temp.carga_imoveis)
WHERE n = 1;
CREATE INDEX temp.carga_donos_seq ON carga_donos (seq, ordem);";

const DONOS: &str = "
INSERT INTO main.imovel_proprietarios (codigo_car, ordem, documento, nome)
SELECT v.codigo_car, d.ordem, d.documento, d.nome
FROM temp.carga_vencedores v JOIN temp.carga_donos d ON d.seq = v.seq
ORDER BY v.codigo_car, d.ordem";

const LIMPAR: &str = "DROP TABLE IF EXISTS temp.carga_imoveis;
DROP TABLE IF EXISTS temp.carga_donos;
DROP TABLE IF EXISTS temp.carga_vencedores;";

/// Stages every batch received on `rx`, then writes the winners; counts into `contagem`.
pub(super) fn gravar(
    conn: &mut Connection,
    rx: &mut mpsc::Receiver<Vec<Imovel>>,
    barra: &ProgressBar,
    contagem: &mut Contagem,
) -> Result<(), CargaError> {
    conn.execute_batch(PREPARAR)?;
    let r = (|| {
        let mut lidos = 0u64;
        while let Some(lote) = rx.blocking_recv() {
            encenar(conn, &lote)?;
            lidos += lote.len() as u64;
            barra.inc(lote.len() as u64);
        }
        barra.set_message("ordenando");
        let gravados = mover(conn)?;
        contagem.gravados += gravados;
        contagem.ignorados += lidos - gravados;
        Ok::<_, CargaError>(())
    })();
    let limpo = conn.execute_batch(LIMPAR);
    r?;
    Ok(limpo?)
}

/// Appends one batch to the staging tables in one transaction.
fn encenar(conn: &mut Connection, lote: &[Imovel]) -> Result<(), CargaError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut imovel = tx.prepare_cached(&format!(
            "INSERT INTO temp.carga_imoveis ({COLUNAS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
        ))?;
        let mut dono = tx.prepare_cached(
            "INSERT INTO temp.carga_donos (seq, ordem, documento, nome) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for i in lote {
            let v = valores_de(i);
            let seq = imovel.insert(rusqlite::params_from_iter(v.iter()))?;
            for (ordem, p) in i.proprietarios.iter().enumerate() {
                dono.execute(params![seq, ordem as i64, p.documento.as_str(), p.nome])?;
            }
        }
    }
    tx.commit()?;
    Ok(())
}

/// Writes the winning versions and their owners in code order; returns how many records.
fn mover(conn: &mut Connection) -> Result<u64, CargaError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(VENCEDORES)?;
    let gravados = tx.execute(
        &format!(
            "INSERT INTO main.imoveis ({COLUNAS})
             SELECT {colunas_c} FROM temp.carga_vencedores v
             JOIN temp.carga_imoveis c ON c.rowid = v.seq
             ORDER BY v.codigo_car",
            colunas_c = COLUNAS
                .split(',')
                .map(|c| format!("c.{}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [],
    )?;
    tx.execute(DONOS, [])?;
    tx.commit()?;
    Ok(gravados as u64)
}
