//! A PostgreSQL cluster of the test's own (initdb in a temporary folder, a free port, run as the
//! `postgres` user with `runuser` when the test runs as root, since the tools refuse root)
//! stopped with `pg_ctl stop -m immediate` a few times under concurrent charged clients: once
//! the journal of lost outcomes is settled, the debits equal the 200s answered, to the cent,
//! after every run; the last stop of each run also restarts the server before the database
//! returns. Skipped with a message where the server binaries are absent. The scenario lives in
//! `carapi_tests::crash`, shared with the `crash` figure of the benchmarks (the long version:
//! 25 stops, 6 clients, 3 runs).
//!
//! The same test runs longer with `CARAPI_CRASH_STOPS`, `CARAPI_CRASH_CLIENTS` and
//! `CARAPI_CRASH_RUNS`; each run prints its figures (200s answered, debited, reversed).

use carapi_tests::crash::{CrashScale, pg_bin, run};

/// `var` as a number, else `default`.
fn knob(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(carapi_pg_bin),
    ignore = "needs PostgreSQL's server programs (/usr/lib/postgresql/*/bin) when this test was built"
)]
async fn immediate_stops_under_charged_clients_debit_exactly_the_200s() {
    let Some(bin) = pg_bin() else {
        eprintln!("skipped: no PostgreSQL server programs under /usr/lib/postgresql/*/bin");
        return;
    };
    let scale = CrashScale {
        stopped: knob("CARAPI_CRASH_STOPS", 3),
        clients: knob("CARAPI_CRASH_CLIENTS", 4),
        rounds: knob("CARAPI_CRASH_RUNS", 3),
    };
    for r in run(bin, scale).await {
        assert!(r.ledger.is_consistent(), "run {}: {:?}", r.round, r.ledger);
        assert!(
            r.exact(),
            "run {}: debits against the 200s answered: {} answered, {} debited at {}: {:?}",
            r.round,
            r.answered,
            r.debited,
            r.preco,
            r.ledger
        );
        assert_eq!(r.open, 0, "run {}: journal settled", r.round);
    }
}
