//! The retention job of uncharged error rows (rules: [`crate::money::retencao`]): once an hour
//! of the server's clock, over all the processes of one database (a lease in the store, as the
//! reconciliation's), every account's error rows older than [`Config::error_retention_days`]
//! are deleted, a batch per transaction ([`crate::store::ConsultasStore::remove_uncharged`]).
//! It reads the state's clock, so a test double's movable clock drives it.
//!
//! [`Config::error_retention_days`]: crate::Config::error_retention_days

use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::money::retencao::cut_of;
use crate::state::AppState;
use crate::store::{Store, StoreError};

/// Name of the job's lease.
pub(crate) const TASK: &str = "retencao";

/// Rows deleted per account per transaction.
const BATCH: u32 = 1_000;

/// How often a pass runs, in the server clock's time.
const INTERVAL_HOURS: i64 = 1;

/// One pass over every account of `store`: deletes the uncharged error rows recorded more than
/// `dias` days (at least [`crate::money::retencao::MIN_DAYS`]) before `now`. Returns how many
/// rows were deleted.
///
/// # Errors
/// [`StoreError`] when the store fails (what was deleted before stays deleted).
pub async fn run_once(store: &dyn Store, now: DateTime<Utc>, dias: u32) -> Result<u64, StoreError> {
    let antes = cut_of(now, dias);
    let mut done = 0;
    for conta in store.contas().await? {
        loop {
            let n = store.remove_uncharged(conta, antes, BATCH).await?;
            done += n;
            if n < u64::from(BATCH) {
                break;
            }
        }
    }
    Ok(done)
}

/// The job in one process's job loop: when it last looked at the lease, so that the store is
/// asked at most once an hour of the clock.
#[derive(Debug, Default)]
pub struct Job {
    /// The clock's instant from which the next turn asks the store.
    next: Mutex<Option<DateTime<Utc>>>,
}

impl Job {
    /// The job's turn: a pass ([`run_once`] at the state's clock) when the retention is on, an
    /// hour has passed since this process's last look, and the job's lease is free (it is then
    /// taken for an hour, with an owner of its own, so a pass runs at most once an hour among
    /// the processes of one database). Returns how many rows were deleted; a failure is logged
    /// (a later turn tries again).
    pub async fn turn(&self, st: &AppState) -> u64 {
        let Some(dias) = st.config.error_retention_days else {
            return 0;
        };
        let now = st.clock.now();
        {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            if next.is_some_and(|n| now < n) {
                return 0;
            }
            *next = Some(now + chrono::Duration::hours(INTERVAL_HOURS));
        }
        let until = now + chrono::Duration::hours(INTERVAL_HOURS);
        let owner = uuid::Uuid::new_v4().to_string();
        match st.store.reserve_task(TASK, &owner, now, until).await {
            Ok(true) => {}
            Ok(false) => return 0,
            Err(e) => {
                self.retry();
                tracing::warn!(erro = %e, "retenção de erros: reserva falhou; nova tentativa na próxima volta");
                return 0;
            }
        }
        match run_once(st.store.as_ref(), now, dias).await {
            Ok(n) => {
                if n > 0 {
                    tracing::info!(
                        removidas = n,
                        dias,
                        "retenção: consultas de erro não cobradas mais antigas que {dias} dias removidas"
                    );
                }
                n
            }
            Err(e) => {
                tracing::error!(erro = %e, "retenção de erros falhou");
                0
            }
        }
    }

    /// The next turn asks the store again.
    fn retry(&self) {
        *self.next.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
