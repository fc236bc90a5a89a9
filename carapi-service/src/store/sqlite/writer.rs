//! The lookup writer of the SQLite store: one thread owning a `rusqlite` connection to the
//! database file runs every charge ([`Store::charge_consulta`]) and every uncharged history
//! row ([`Store::record_consulta`]) with prepared, cached statements, so a charge is one
//! hop to this thread instead of one hop per statement.
//!
//! Group commit: the thread takes every request queued at that moment (up to [`BATCH`]; under
//! concurrent load, waiting up to [`GROUP_WAIT`] for a group of [`EXPECTED_GROUP`]) and
//! runs them in one `BEGIN IMMEDIATE ... COMMIT`, each inside its own `SAVEPOINT`, so one
//! failing request is rolled back alone. Nobody is answered before the `COMMIT` succeeds: a
//! charge reported as done is durable (WAL, `synchronous = NORMAL`, as the sqlx pools). When
//! the `COMMIT` fails, every request of the group gets the error and nothing of it was
//! written.
//!
//! The charge is planned by [`crate::money::cobranca::plan_cobranca`]: inside one
//! transaction the account row, the counters its limits need and its latest history instant
//! are read, and the plan is applied (the conditional debit, `saldo_centavos >= debit`, the
//! history row, the ledger row, the day's counters, the consolidation). `BEGIN IMMEDIATE` takes the write lock first,
//! so no other writer (the sqlx pool of this process, or another process on the same file,
//! which waits thanks to its busy handler) can interleave between the check and the debit.
//!
//! [`Store::charge_consulta`]: crate::store::ConsultasStore::cobrar_consulta
//! [`Store::record_consulta`]: crate::store::ConsultasStore::registrar_consulta

use std::fmt;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use tokio::sync::oneshot;

use super::rows::instant;
use super::{first_day_of_month, ms};
use crate::money::Centavos;
use crate::money::cobranca::{self, CobrancaState, Counters, HistoricoRow};
use crate::store::{Cobranca, CobrancaResult, ConsultaRecord, ContaId, StoreError};

/// Most requests committed together in one transaction.
pub(super) const BATCH: usize = 256;

/// A group waits for up to this many requests when the previous one had them: fewer,
/// fuller commits under concurrent load write fewer WAL pages per charge (each commit
/// rewrites the account's, history's and ledger's pages whatever it holds).
const EXPECTED_GROUP: usize = 4;

/// How long a group waits for [`EXPECTED_GROUP`] requests at most (then commits what it has).
const GROUP_WAIT: Duration = Duration::from_micros(200);

enum WriterRequest {
    Cobrar(
        Cobranca,
        oneshot::Sender<Result<CobrancaResult, StoreError>>,
    ),
    Register(ConsultaRecord, oneshot::Sender<Result<(), StoreError>>),
}

/// Handle to the writer thread; cloning it shares the thread. The thread stops when the last
/// handle is dropped.
#[derive(Clone)]
pub(super) struct Writer {
    queue: mpsc::Sender<WriterRequest>,
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Escritor")
    }
}

impl Writer {
    /// Opens `file` (already created and migrated) and starts the writer thread.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the file cannot be opened or configured;
    /// [`StoreError::WriterStopped`] when the thread cannot be started.
    pub(super) fn open(file: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open_with_flags(
            file,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_handler(Some(super::wal::wait_for_lock))?;
        // The file is already in WAL mode (set by the sqlx pools, persistent); synchronous and
        // foreign keys are per connection. The statement journals of the requests' savepoints
        // stay in memory (on disk, SQLite created and deleted a file for every group). The WAL
        // is checkpointed by its own thread (`wal.rs`); this connection only past a backstop.
        conn.execute_batch(&format!(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;
             PRAGMA wal_autocheckpoint = {};",
            super::wal::EMERGENCY_FRAMES
        ))?;
        conn.set_prepared_statement_cache_capacity(32);
        let (queue, entry) = mpsc::channel();
        // The writer holds `vivo`; when it stops, the checkpoint thread sees the channel
        // disconnected and stops too.
        let (alive, stopped) = mpsc::channel::<()>();
        super::wal::start(file, stopped)?;
        std::thread::Builder::new()
            .name("carapi-sqlite-escritor".into())
            .spawn(move || {
                let _alive = alive;
                run_loop(conn, entry)
            })
            .map_err(|_| StoreError::WriterStopped)?;
        Ok(Writer { queue })
    }

    /// Runs `c` as [`crate::store::ConsultasStore::charge_consulta`] documents, once committed.
    ///
    /// # Errors
    /// [`StoreError::ReplyLost`] when the writer took the charge but its reply never
    /// came (the thread stopped): it may have been committed.
    pub(super) async fn charge(&self, c: Cobranca) -> Result<CobrancaResult, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.queue
            .send(WriterRequest::Cobrar(c, tx))
            .map_err(|_| StoreError::WriterStopped)?;
        rx.await
            .map_err(|_| StoreError::ReplyLost("resposta do escritor perdida".into()))?
    }

    /// Runs `r` as [`crate::store::ConsultasStore::record_consulta`] documents, once committed.
    pub(super) async fn record(&self, r: ConsultaRecord) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.queue
            .send(WriterRequest::Register(r, tx))
            .map_err(|_| StoreError::WriterStopped)?;
        rx.await.map_err(|_| StoreError::WriterStopped)?
    }
}

/// The outcome of one request, held until the group's `COMMIT`.
enum Done {
    Cobrar(
        Result<CobrancaResult, StoreError>,
        oneshot::Sender<Result<CobrancaResult, StoreError>>,
    ),
    Register(
        Result<(), StoreError>,
        oneshot::Sender<Result<(), StoreError>>,
    ),
}

fn run_loop(conn: Connection, entry: mpsc::Receiver<WriterRequest>) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut previous = 1;
    // Blocks until a request arrives; ends when every handle is dropped.
    while let Ok(first) = entry.recv() {
        batch.push(first);
        gather(&entry, &mut batch, previous.min(EXPECTED_GROUP), GROUP_WAIT);
        previous = batch.len();
        run_batch(&conn, &mut batch);
    }
}

/// Adds to `lote` what is queued; while it holds fewer than `esperado` requests, waits up to
/// `espera` for more. `esperado` is the last group's size (at most [`EXPECTED_GROUP`]): a lone
/// client never waits, concurrent ones share commits.
fn gather<T>(entry: &mpsc::Receiver<T>, batch: &mut Vec<T>, expected: usize, wait: Duration) {
    let limite = Instant::now() + wait;
    while batch.len() < BATCH {
        match entry.try_recv() {
            Ok(p) => batch.push(p),
            Err(_) if batch.len() >= expected => return,
            Err(_) => {
                let missing = limite.saturating_duration_since(Instant::now());
                match entry.recv_timeout(missing) {
                    Ok(p) => batch.push(p),
                    Err(_) => return,
                }
            }
        }
    }
}

fn run_batch(conn: &Connection, batch: &mut Vec<WriterRequest>) {
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        let msg = e.to_string();
        for p in batch.drain(..) {
            answer_error(p, &msg);
        }
        return;
    }
    let mut completed = Vec::with_capacity(batch.len());
    let mut fatal: Option<String> = None;
    for p in batch.drain(..) {
        if let Some(msg) = &fatal {
            answer_error(p, msg);
            continue;
        }
        let done = match p {
            WriterRequest::Cobrar(c, tx) => {
                in_savepoint(conn, |conn| charge(conn, &c)).map(|r| Done::Cobrar(r, tx))
            }
            WriterRequest::Register(r, tx) => {
                in_savepoint(conn, |conn| record(conn, &r)).map(|r| Done::Register(r, tx))
            }
        };
        match done {
            Ok(f) => completed.push(f),
            // The savepoint could not be undone: the transaction is unusable; drop it all.
            Err(e) => fatal = Some(e.to_string()),
        }
    }
    let end = match fatal {
        Some(msg) => Err(msg),
        None => conn.execute_batch("COMMIT").map_err(|e| e.to_string()),
    };
    match end {
        Ok(()) => {
            for f in completed {
                // A caller that went away (request cancelled) cannot be told; what was
                // committed stays committed, as with the sqlx path.
                match f {
                    Done::Cobrar(r, tx) => drop(tx.send(r)),
                    Done::Register(r, tx) => drop(tx.send(r)),
                }
            }
        }
        Err(msg) => {
            // Nothing of the group was written: make sure the transaction is gone, then tell
            // everyone.
            let _ = conn.execute_batch("ROLLBACK");
            for f in completed {
                match f {
                    Done::Cobrar(_, tx) => drop(tx.send(Err(commit_failure(&msg)))),
                    Done::Register(_, tx) => drop(tx.send(Err(commit_failure(&msg)))),
                }
            }
        }
    }
}

fn commit_failure(msg: &str) -> StoreError {
    StoreError::GroupCommit(msg.to_owned())
}

fn answer_error(p: WriterRequest, msg: &str) {
    match p {
        WriterRequest::Cobrar(_, tx) => drop(tx.send(Err(commit_failure(msg)))),
        WriterRequest::Register(_, tx) => drop(tx.send(Err(commit_failure(msg)))),
    }
}

/// Runs `f` inside `SAVEPOINT request_id`: released on success, rolled back (alone) on failure.
/// The outer error means the savepoint itself failed: the group's transaction must be dropped.
fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<Result<T, StoreError>, rusqlite::Error> {
    conn.prepare_cached("SAVEPOINT pedido")?.execute([])?;
    let r = f(conn);
    if r.is_err() {
        conn.prepare_cached("ROLLBACK TO pedido")?.execute([])?;
    }
    conn.prepare_cached("RELEASE pedido")?.execute([])?;
    Ok(r)
}

/// Adds one lookup to the day's counters.
fn count(conn: &Connection, conta: ContaId, day: NaiveDate, c: Counters) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO uso_diario (conta_id, dia, requisicoes, cobradas, erros, gasto_centavos) VALUES (?, ?, 1, ?, ?, ?)
         ON CONFLICT (conta_id, dia) DO UPDATE SET requisicoes = requisicoes + 1,
           cobradas = cobradas + excluded.cobradas, erros = erros + excluded.erros,
           gasto_centavos = gasto_centavos + excluded.gasto_centavos",
    )?
    .execute(params![
        conta.0,
        day.to_string(),
        i64::from(c.cobrada),
        i64::from(c.is_error),
        c.gasto.get()
    ])?;
    Ok(())
}

/// Who and what a history row is about; its amounts come from the plan.
struct Chave<'a> {
    conta: ContaId,
    endpoint: &'a str,
    chave: Option<&'a str>,
    request_id: Option<String>,
}

/// One history row with its ordinals (each group's count plus one: the writer is the only
/// inserter, rules in [`crate::store::historico`]); returns its id.
fn insert_consulta(conn: &Connection, k: &Chave<'_>, l: &HistoricoRow) -> Result<i64, StoreError> {
    let chave = crate::store::historico::without_nul_opt(k.chave);
    conn.prepare_cached(
        "INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado,
             valor_centavos, saldo_antes, saldo_depois, pedido,
             ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
             COALESCE(SUM(quantidade), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = ?3), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE sucesso = (?5 = 200)), 0) + 1,
             COALESCE(SUM(quantidade) FILTER (WHERE endpoint = ?3 AND sucesso = (?5 = 200)), 0) + 1
         FROM consultas_contagem WHERE conta_id = ?1",
    )?
    .execute(params![
        k.conta.0,
        ms(l.data),
        k.endpoint,
        chave,
        i64::from(l.status),
        i64::from(l.valor.get() > 0),
        l.valor.get(),
        l.saldo_antes.map(|c| c.get()),
        l.saldo_depois.map(|c| c.get()),
        k.request_id
    ])?;
    Ok(conn.last_insert_rowid())
}

/// `data` of the account's latest history row.
fn last_date(conn: &Connection, conta: ContaId) -> Result<Option<DateTime<Utc>>, StoreError> {
    let ms: Option<i64> = conn
        .prepare_cached(
            "SELECT data_ms FROM consultas WHERE conta_id = ? ORDER BY ordem_conta DESC LIMIT 1",
        )?
        .query_row([conta.0], |r| r.get(0))
        .optional()?;
    Ok(ms.map(instant))
}

fn record(conn: &Connection, r: &ConsultaRecord) -> Result<(), StoreError> {
    let saldo: Option<i64> = conn
        .prepare_cached("SELECT saldo_centavos FROM contas WHERE id = ?")?
        .query_row([r.conta.0], |row| row.get(0))
        .optional()?;
    let last = last_date(conn, r.conta)?;
    let (line, counters) = cobranca::plan_record(saldo.map(Centavos::new), r.status, r.at, last);
    let chave = Chave {
        conta: r.conta,
        endpoint: r.endpoint.as_str(),
        chave: r.chave.as_deref(),
        request_id: None,
    };
    insert_consulta(conn, &chave, &line)?;
    count(conn, r.conta, r.day, counters)
}

/// What the charge plan needs: the account, the counters its limits need
/// ([`cobranca::readings`]) and its latest history instant.
fn state_of(conn: &Connection, c: &Cobranca) -> Result<CobrancaState, StoreError> {
    let (saldo, legado, limite_diario, limite_mensal): (i64, i64, Option<i64>, Option<i64>) =
        conn.prepare_cached(
            "SELECT saldo_centavos, legado, limite_diario, limite_mensal_centavos FROM contas WHERE id = ?",
        )?
        .query_row([c.conta.0], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    let limite_diario = limite_diario.and_then(|v| u32::try_from(v).ok());
    let limite_mensal = limite_mensal.map(Centavos::new);
    let readings = cobranca::readings(limite_diario, limite_mensal);
    let cobradas_hoje = if readings.cobradas_hoje {
        conn.prepare_cached("SELECT cobradas FROM uso_diario WHERE conta_id = ? AND dia = ?")?
            .query_row(params![c.conta.0, c.day.to_string()], |r| {
                r.get::<_, i64>(0)
            })
            .optional()?
            .unwrap_or(0)
    } else {
        0
    };
    let gasto_mes = if readings.gasto_mes {
        let (start, end) = first_day_of_month(c.day);
        conn.prepare_cached(
            "SELECT COALESCE(SUM(gasto_centavos), 0) FROM uso_diario WHERE conta_id = ? AND dia >= ? AND dia < ?",
        )?
        .query_row(params![c.conta.0, start, end], |r| r.get::<_, i64>(0))?
    } else {
        0
    };
    Ok(CobrancaState {
        saldo: Centavos::new(saldo),
        legado: legado != 0,
        limite_diario,
        limite_mensal,
        cobradas_hoje: cobradas_hoje.unsigned_abs(),
        gasto_mes: Centavos::new(gasto_mes),
        last_date: last_date(conn, c.conta)?,
        consolidated: match &c.consolidate {
            Some(codigo) => consolidated(conn, codigo.as_str())?,
            None => false,
        },
    })
}

/// Whether `codigo` was consolidated by an earlier charged lookup.
fn consolidated(conn: &Connection, codigo: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM imoveis_consolidados WHERE codigo_car = ?")?
        .query_row([codigo], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Reads the state, plans the charge and applies the plan.
fn charge(conn: &Connection, c: &Cobranca) -> Result<CobrancaResult, StoreError> {
    let plan = cobranca::plan_cobranca(&state_of(conn, c)?, c.endpoint, c.at);
    if plan.debit.get() > 0 {
        let debited = conn
            .prepare_cached(
                "UPDATE contas SET saldo_centavos = saldo_centavos - ? WHERE id = ? AND saldo_centavos >= ?",
            )?
            .execute(params![plan.debit.get(), c.conta.0, plan.debit.get()])?;
        if debited != 1 {
            // Cannot happen under BEGIN IMMEDIATE; refuse (the savepoint is rolled back)
            // rather than go negative.
            return Err(StoreError::Corrupt(
                "saldo mudou durante a transação".into(),
            ));
        }
    }
    let chave = Chave {
        conta: c.conta,
        endpoint: c.endpoint.as_str(),
        chave: Some(&c.chave),
        request_id: Some(c.request_id.to_string()),
    };
    let id = insert_consulta(conn, &chave, &plan.historico)?;
    if let Some(valor) = plan.ledger_entry {
        conn.prepare_cached(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'debito', ?, 'consulta', ?, ?)",
        )?
        .execute(params![c.conta.0, valor.get(), id.to_string(), ms(c.at)])?;
    }
    count(conn, c.conta, c.day, plan.counters)?;
    if let (Some(codigo), true) = (&c.consolidate, plan.consolidate) {
        consolidate(conn, codigo.as_str(), ms(c.at))?;
    }
    Ok(plan.result)
}

/// Marks `codigo` consolidated at `at_ms` unless it already was. One insert into the small
/// side table `imoveis_consolidados`, never a write into `imoveis` (migration 0002).
fn consolidate(conn: &Connection, codigo: &str, at_ms: i64) -> Result<(), StoreError> {
    conn
        .prepare_cached(
            "INSERT INTO imoveis_consolidados (codigo_car, consolidado_em) VALUES (?, ?) ON CONFLICT (codigo_car) DO NOTHING",
        )?
        .execute(params![codigo, at_ms])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_waits_for_company_only_after_a_group_had_it() {
        let (tx, rx) = mpsc::channel();
        // A lone client: nothing queued, nothing waited for.
        let mut batch = vec![0];
        let t = Instant::now();
        gather(&rx, &mut batch, 1, Duration::from_secs(5));
        assert_eq!(batch, [0]);
        assert!(t.elapsed() < Duration::from_secs(1));
        // Concurrent ones: what is queued, then what arrives within the wait.
        tx.send(1).unwrap();
        let late = tx.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            late.send(2).unwrap();
            late.send(3).unwrap();
            late.send(4).unwrap();
        });
        let mut batch = vec![0];
        gather(&rx, &mut batch, 4, Duration::from_secs(5));
        t.join().unwrap();
        assert!(batch.len() >= 4, "{batch:?}");
        assert_eq!(&batch[..4], [0, 1, 2, 3]);
        // Nobody else comes: the group goes as it is after the wait.
        while rx.try_recv().is_ok() {}
        let mut batch = vec![9];
        gather(&rx, &mut batch, 4, Duration::from_millis(10));
        assert_eq!(batch, [9]);
    }
}
