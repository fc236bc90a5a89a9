//! The first performance figures, printed as a markdown table. Each figure is a ratio measured
//! side by side in the same run, so a noisy machine moves both sides alike.
//!
//! ```sh
//! cargo bench -p carapi-tests --bench figures
//! ```
//! 1. Server: charged basic lookups per second over 1,000 funded keys, against a bare axum
//!    handler returning a fixed JSON body of the same size; same load client, same connections
//!    (per-key limiter off for the target row, on for an informational row: see `server.rs`).
//! 2. CLI: wall time of `carapi car <sandbox code>` against `curl` doing the same request.
//! 3. SDK: time per call against a raw reqwest call to the same server.
//! 4. Batch: 200 lookups through the SDK's default limiter: achieved rate / 10 per second, 429s.
//! 5. Isolation: other accounts' `GET /v1/saldo` and paid lookup p99 while a 1M-row account
//!    hammers its history at its rate limit, against the same load idle (`isolation.rs`).
//! 6. Cold lookups at 10k vs 1M records, cached lookups at 10k, and the owner of 10,000 CARs,
//!    against the release server in its own process (`cold_consulta.rs`).
//! 7. Attack (`attack`): another address's p99 while one address holds 2,000 idle sockets,
//!    against the same client with no attack (`attack.rs`).
//! 8. Unfinished heads (`head`): the server's peak RSS under 1,000 sockets from 10
//!    addresses each holding a 390 KB unfinished head, against hyper's default buffer bound
//!    (`head_bound.rs`).
//! 9. Scale (`scale`): records/s and peak RSS of a bulk `seed` and CSV `import` on SQLite, and
//!    a `seed` on PostgreSQL when `DATABASE_URL` is set (`CARAPI_ESCALA_N` records, default 1M;
//!    see `scale.rs`). Not in a run without a filter: pass `scale`.
//! 10. Crash (`crash`): debited against the 200s answered over 25 immediate stops of a
//!     PostgreSQL cluster of its own under 6 charged clients, 3 runs (`crash.rs`; skipped
//!     without PostgreSQL's server programs). Not in a run without a filter: pass `crash`.
//! 11. Archive (`archive`): a lookup answered from a 1M-entry SQLite archive (p50, p99), and
//!     a batch of 1,000 bought lookups with the archive on against off: answers 20 ms late, as
//!     over a network (the goal), and, for information, the release server on this machine and
//!     the in-process test double (`archive.rs`).

mod archive;
mod attack;
mod batch;
mod binary;
mod cli;
mod cold_consulta;
mod crash;
mod head_bound;
mod isolation;
mod load;
mod scale;
mod sdk;
mod server;

/// One row of the results table.
#[derive(Debug)]
pub struct Figure {
    pub name: &'static str,
    pub measured: String,
    pub reference: String,
    pub ratio: f64,
    pub target: &'static str,
    pub ok: bool,
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; a filter word picks figures (`server`, `cli`, `sdk`, `batch`,
    // `attack`, `head`, `isolation`, `cold`, `scale`, `crash`; the last two only when asked for,
    // they take minutes at their default size). The earlier Portuguese words (`ataque`, `cabecalho`, `isolamento`,
    // `fria`) still work.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wants = |names: &[&str]| {
        filter.is_empty()
            || filter
                .iter()
                .any(|f| names.iter().any(|n| n.contains(f.as_str())))
    };

    let mut figures = Vec::new();
    if wants(&["server"]) {
        figures.extend(server::run().await);
    }
    if wants(&["attack", "ataque"]) {
        figures.extend(attack::run().await);
    }
    if wants(&["head", "cabecalho"]) {
        figures.extend(head_bound::run().await);
    }
    if wants(&["cli"]) {
        figures.extend(cli::run().await);
    }
    if wants(&["sdk"]) {
        figures.push(sdk::run().await);
    }
    if wants(&["batch"]) {
        figures.push(batch::run().await);
    }
    if wants(&["isolation", "isolamento"]) {
        figures.extend(isolation::run().await);
    }
    if wants(&["cold", "fria"]) {
        figures.extend(cold_consulta::run().await);
    }
    if wants(&["archive", "acervo"]) {
        figures.extend(archive::run().await);
    }
    if filter.iter().any(|f| "scale".contains(f.as_str())) {
        figures.extend(scale::run().await);
    }
    if filter.iter().any(|f| "crash".contains(f.as_str())) {
        figures.extend(crash::run().await);
    }

    println!("\n| figure | measured | baseline | ratio | target | verdict |");
    println!("|---|---|---|---|---|---|");
    for f in &figures {
        println!(
            "| {} | {} | {} | {:.3} | {} | {} |",
            f.name,
            f.measured,
            f.reference,
            f.ratio,
            f.target,
            if f.ok { "ok" } else { "MISSED" }
        );
    }
}
