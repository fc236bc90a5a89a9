//! The SQLite load into an empty base: every version read goes through an external merge sort
//! by code ([`super::ordenar`]), then the winners are inserted into `imoveis` and
//! `imovel_proprietarios` in code order.
//!
//! Writing random CAR codes straight into `imoveis` inserts at random places of its primary-key
//! B-tree; past the page cache (a few hundred thousand records) each insert reads pages back
//! and the load slows down without bound. Inserting in key order appends: each page of the
//! final B-trees is written once.
//!
//! While the winners are written, the base leaves WAL mode for a rollback journal when it can
//! (no other connection open): pages appended to an empty table need no journal, where WAL
//! would write every page twice (to the log, then to the base at the checkpoint). The base is
//! back in WAL mode before the load returns.
//!
//! The winner of a code read more than once is the rule of [`super::wfs::mais_nova`] and of the
//! incremental writer ([`super::sqlite`]): the newest `data_atualizacao` (a missing one the
//! oldest), then the newest `data_cadastro`, and on a tie the version read last.

use std::sync::mpsc::{Receiver, SyncSender};

use indicatif::ProgressBar;
use rusqlite::{Connection, TransactionBehavior, params};
use tokio::sync::mpsc;

use super::ordenar::{Linha, Ordenador, Valor, Vencedores};
use super::sqlite::{COLUNAS, valores_de};
use super::{CargaError, Contagem};
use crate::dados::Imovel;

/// Winners per transaction.
const POR_TRANSACAO: usize = 100_000;

const INSERIR_DONO: &str = "INSERT INTO main.imovel_proprietarios (codigo_car, ordem, documento,
    nome) VALUES (?1, ?2, ?3, ?4)";

/// Sorts every batch received on `rx`, then writes the winners; counts into `contagem`.
pub(super) fn gravar(
    conn: &mut Connection,
    rx: &mut mpsc::Receiver<Vec<Imovel>>,
    barra: &ProgressBar,
    contagem: &mut Contagem,
) -> Result<(), CargaError> {
    let mut ordenador = Ordenador::default();
    while let Some(lote) = rx.blocking_recv() {
        for i in &lote {
            ordenador.push(linha_de(i))?;
        }
        barra.inc(lote.len() as u64);
    }
    barra.set_message("ordenando");
    let vencedores = ordenador.vencedores()?;
    let sem_wal = conn
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get::<_, String>(0))
        .is_ok_and(|modo| modo.eq_ignore_ascii_case("delete"));
    // The merge runs on its own thread, a few batches ahead of the inserts.
    let r = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        s.spawn(move || fundir(vencedores, &tx));
        escrever(conn, &rx, contagem)
    });
    if sem_wal {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
    }
    r
}

/// The spilled form of `i`: its `imoveis` row, version and owners.
fn linha_de(i: &Imovel) -> Linha {
    let valores = valores_de(i);
    let texto = |v: &Valor| match v {
        Valor::Texto(t) => t.clone(),
        _ => String::new(),
    };
    Linha {
        codigo: i.codigo_car.as_str().to_owned(),
        versao: (texto(&valores[7]), texto(&valores[6])),
        valores: valores.into(),
        donos: i
            .proprietarios
            .iter()
            .map(|p| (p.documento.as_str().to_owned(), p.nome.clone()))
            .collect(),
    }
}

/// A batch of winners, each with how many versions of its code lost.
type Lote = Vec<(Linha, u64)>;

/// Sends the winners in batches of [`super::LOTE`]; stops at the end, at an error (sent) or
/// when the writer has stopped.
fn fundir(mut vencedores: Vencedores, tx: &SyncSender<Result<Lote, CargaError>>) {
    loop {
        let mut lote = Vec::with_capacity(super::LOTE);
        while lote.len() < super::LOTE {
            match vencedores.proximo() {
                Ok(Some(v)) => lote.push(v),
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        let fim = lote.len() < super::LOTE;
        if (!lote.is_empty() && tx.send(Ok(lote)).is_err()) || fim {
            return;
        }
    }
}

/// Inserts the winners received on `rx` in code order, [`POR_TRANSACAO`] per transaction.
fn escrever(
    conn: &mut Connection,
    rx: &Receiver<Result<Lote, CargaError>>,
    contagem: &mut Contagem,
) -> Result<(), CargaError> {
    let inserir_imovel = format!(
        "INSERT INTO main.imoveis ({COLUNAS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
         ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    );
    let mut lotes = rx.iter();
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut n = 0;
        {
            let mut imovel = tx.prepare_cached(&inserir_imovel)?;
            let mut dono = tx.prepare_cached(INSERIR_DONO)?;
            while n < POR_TRANSACAO {
                let Some(lote) = lotes.next() else { break };
                for (l, perdidas) in lote? {
                    imovel.execute(rusqlite::params_from_iter(l.valores.iter()))?;
                    for (ordem, (documento, nome)) in l.donos.iter().enumerate() {
                        dono.execute(params![l.codigo, ordem as i64, documento, nome])?;
                    }
                    contagem.gravados += 1;
                    contagem.ignorados += perdidas;
                    n += 1;
                }
            }
        }
        tx.commit()?;
        if n < POR_TRANSACAO {
            return Ok(());
        }
    }
}
