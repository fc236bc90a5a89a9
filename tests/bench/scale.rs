//! Figure 5 (`scale`): bulk load at SICAR scale, through the release `carapi-server` binary
//! as an operator runs it, timed from outside, with the child's peak resident memory
//! (`VmHWM` of `/proc/<pid>/status`, sampled every 10 ms while it runs; Linux).
//!
//! - `seed --synthetic N` into an empty SQLite file;
//! - `import` of an N-row public SICAR CSV into an empty SQLite file (validation pass included);
//! - `seed --synthetic N` into an empty PostgreSQL database, when `DATABASE_URL` is set (the
//!   database `carapi_escala_<pid>` is created and dropped on `DATABASE_URL`'s server).
//!
//! N is `CARAPI_ESCALA_N` (default 1,000,000); e.g. `CARAPI_ESCALA_N=20000 cargo bench -p
//! carapi-tests --bench figures scale` for a quick run. Targets (SQLite): >= 200,000
//! records/s and peak RSS <= 200 MB whatever N.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use carapi_loader::synthetic::Synthetic;

use crate::Figure;

const N_DEFAULT: usize = 1_000_000;
const TARGET_PER_SECOND: f64 = 200_000.0;
const TARGET_RSS_MB: f64 = 200.0;

/// What one run of the binary took.
struct Measured {
    seconds: f64,
    peak_mb: f64,
}

/// Runs `carapi-server args…`, sampling its `VmHWM` until it exits.
fn measure(args: &[&str]) -> Measured {
    // Built (by cargo, when stale) before the clock starts: the figure is the load alone.
    crate::binary::server_bin();
    let start = Instant::now();
    let mut child = crate::binary::command(args)
        .args(["--sem-progresso"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("carapi-server starts");
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    loop {
        if let Some(kb) = std::fs::read_to_string(&status)
            .ok()
            .and_then(|s| vm_hwm_kb(&s))
        {
            peak_kb = peak_kb.max(kb);
        }
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let seconds = start.elapsed().as_secs_f64();
    let output = child.wait_with_output().expect("output");
    assert!(
        output.status.success(),
        "carapi-server {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Measured {
        seconds,
        peak_mb: peak_kb as f64 / 1024.0,
    }
}

/// `VmHWM` (peak resident set) in kB from a `/proc/<pid>/status` text.
fn vm_hwm_kb(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Writes `n` synthetic records as a public SICAR CSV, on disk before the import's clock
/// starts (its write-back would otherwise compete with the import).
fn write_csv(path: &Path, n: usize) {
    let f = std::fs::File::create(path).expect("create CSV");
    carapi_loader::import::write_csv(std::io::BufWriter::new(&f), Synthetic::new(n, 99))
        .expect("write CSV");
    f.sync_all().expect("sync CSV");
}

/// Runs `carapi-server args…` `vezes` times on a fresh base each (`prepare(i)` gives run
/// `i`'s arguments and leaves its folder ready): the median time and the largest peak RSS.
fn repeat(times: usize, mut prepare: impl FnMut(usize) -> Vec<String>) -> (Measured, Vec<f64>) {
    let mut measures: Vec<Measured> = (0..times)
        .map(|i| {
            let args = prepare(i);
            measure(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .collect();
    let durations: Vec<f64> = measures.iter().map(|m| m.seconds).collect();
    let peak = measures.iter().map(|m| m.peak_mb).fold(0.0, f64::max);
    measures.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let median = measures.swap_remove(measures.len() / 2);
    (
        Measured {
            seconds: median.seconds,
            peak_mb: peak,
        },
        durations,
    )
}

fn figure(
    name: &'static str,
    n: usize,
    (m, durations): &(Measured, Vec<f64>),
    sqlite: bool,
) -> Figure {
    let per_second = n as f64 / m.seconds;
    let ok = !sqlite || (per_second >= TARGET_PER_SECOND && m.peak_mb <= TARGET_RSS_MB);
    let runs: Vec<String> = durations.iter().map(|t| format!("{t:.1}")).collect();
    Figure {
        name,
        measured: format!(
            "{n} records in {:.1} s (median of {} s) = {:.0} records/s, peak RSS {:.0} MB",
            m.seconds,
            runs.join(", "),
            per_second,
            m.peak_mb
        ),
        reference: format!("{TARGET_PER_SECOND:.0} records/s, {TARGET_RSS_MB:.0} MB"),
        ratio: per_second / TARGET_PER_SECOND,
        target: if sqlite { ">= 1 and <= 200 MB" } else { "info" },
        ok,
    }
}

pub async fn run() -> Vec<Figure> {
    let n: usize = std::env::var("CARAPI_ESCALA_N")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(N_DEFAULT);
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = |name: &str| format!("sqlite://{}", dir.path().join(name).display());
    let n_text = n.to_string();
    let mut figures = Vec::new();

    // On a shared 2-core machine one run can be off by a third: the median of a few.
    let times = if n <= 2_000_000 { 3 } else { 1 };
    let m = repeat(times, |i| {
        [
            "seed",
            "--synthetic",
            &n_text,
            "--database",
            &sqlite(&format!("seed{i}.db")),
        ]
        .map(str::to_owned)
        .to_vec()
    });
    figures.push(figure("Scale: `seed --synthetic N`, SQLite", n, &m, true));

    let csv = dir.path().join("imoveis.csv");
    write_csv(&csv, n);
    let path = csv.display().to_string();
    let m = repeat(times, |i| {
        [
            "import",
            &path,
            "--database",
            &sqlite(&format!("import{i}.db")),
        ]
        .map(str::to_owned)
        .to_vec()
    });
    std::fs::remove_file(&csv).ok();
    figures.push(figure(
        "Scale: `import` of an N-row CSV, SQLite",
        n,
        &m,
        true,
    ));

    if let Some(admin) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) {
        let name = format!("carapi_escala_{}", std::process::id());
        let url = carapi_tests::pg::with_database(&admin, &name);
        let m = repeat(1, |_| {
            ["seed", "--synthetic", &n_text, "--database", &url]
                .map(str::to_owned)
                .to_vec()
        });
        figures.push(figure(
            "Scale: `seed --synthetic N`, PostgreSQL (info)",
            n,
            &m,
            false,
        ));
        carapi_tests::pg::drop_database(&admin, &name).await;
    } else {
        println!("scale: DATABASE_URL not set; no PostgreSQL row");
    }
    figures
}
