//! Figure (`crash`): the long version of the PostgreSQL crash test
//! (`carapi-server/tests/pg_crash.rs`, scenario in `carapi_tests::crash`): 25 immediate stops
//! (`pg_ctl stop -m immediate`) of a cluster of its own under 6 charged clients, 3 runs, the
//! last stop of each run also restarting the server before the database returns. Per run, what
//! was debited against the 200s answered times the price: the contract says a 5xx never
//! debits, so the target is a ratio of exactly 1. Skipped with a message without PostgreSQL's
//! server programs (`/usr/lib/postgresql/*/bin`). `CARAPI_CRASH_STOPS`, `CARAPI_CRASH_CLIENTS`
//! and `CARAPI_CRASH_RUNS` change the size. Not in a run without a filter: pass `crash`.

use carapi_tests::crash::{CrashScale, pg_bin, run as scenario};

use crate::Figure;

/// `var` as a number, else `default`.
fn knob(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

pub async fn run() -> Vec<Figure> {
    let Some(bin) = pg_bin() else {
        eprintln!("crash: skipped: no PostgreSQL server programs under /usr/lib/postgresql/*/bin");
        return Vec::new();
    };
    let scale = CrashScale {
        stopped: knob("CARAPI_CRASH_STOPS", 25),
        clients: knob("CARAPI_CRASH_CLIENTS", 6),
        rounds: knob("CARAPI_CRASH_RUNS", 3),
    };
    eprintln!(
        "crash: {} immediate stops under {} clients, {} runs",
        scale.stopped, scale.clients, scale.rounds
    );
    scenario(bin, scale)
        .await
        .into_iter()
        .map(|r| {
            let due = r.preco.get() as f64 * r.answered as f64;
            Figure {
                name: "crash: debited vs 200s answered",
                measured: format!(
                    "run {}: {} debited ({} reversed)",
                    r.round, r.debited, r.ledger.estornos
                ),
                reference: format!("{} answered x {}", r.answered, r.preco),
                ratio: if due > 0.0 {
                    r.debited.get() as f64 / due
                } else {
                    1.0
                },
                target: "= 1 (a 5xx never debits)",
                ok: r.exact() && r.open == 0,
            }
        })
        .collect()
}
