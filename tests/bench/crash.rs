//! Figure (`crash`): the long version of the PostgreSQL crash test
//! (`carapi-server/tests/pg_crash.rs`, scenario in `carapi_tests::crash`): 25 immediate stops
//! (`pg_ctl stop -m immediate`) of a cluster of its own under 6 charged clients, 3 runs, the
//! last stop of each run also restarting the server before the database returns. Per run, what
//! was debited against the 200s answered times the price: the contract says a 5xx never
//! debits, so the target is a ratio of exactly 1. Skipped with a message without PostgreSQL's
//! server programs (`/usr/lib/postgresql/*/bin`). `CARAPI_CRASH_STOPS`, `CARAPI_CRASH_CLIENTS`
//! and `CARAPI_CRASH_RUNS` change the size. Not in a run without a filter: pass `crash`.

use carapi_tests::crash::{CrashScale, pg_bin, run as cenario};

use crate::Figura;

/// `var` as a number, else `default`.
fn knob(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

pub async fn run() -> Vec<Figura> {
    let Some(bin) = pg_bin() else {
        eprintln!("crash: skipped: no PostgreSQL server programs under /usr/lib/postgresql/*/bin");
        return Vec::new();
    };
    let escala = CrashScale {
        paradas: knob("CARAPI_CRASH_STOPS", 25),
        clientes: knob("CARAPI_CRASH_CLIENTS", 6),
        rodadas: knob("CARAPI_CRASH_RUNS", 3),
    };
    eprintln!(
        "crash: {} immediate stops under {} clients, {} runs",
        escala.paradas, escala.clientes, escala.rodadas
    );
    cenario(bin, escala)
        .await
        .into_iter()
        .map(|r| {
            let devido = r.preco.get() as f64 * r.respondidas as f64;
            Figura {
                nome: "crash: debited vs 200s answered",
                medido: format!(
                    "run {}: {} debited ({} reversed)",
                    r.rodada, r.debitado, r.ledger.estornos
                ),
                referencia: format!("{} answered x {}", r.respondidas, r.preco),
                ratio: if devido > 0.0 {
                    r.debitado.get() as f64 / devido
                } else {
                    1.0
                },
                alvo: "= 1 (a 5xx never debits)",
                ok: r.exata() && r.abertas == 0,
            }
        })
        .collect()
}
