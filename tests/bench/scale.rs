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

use crate::Figura;

const N_PADRAO: usize = 1_000_000;
const ALVO_POR_SEGUNDO: f64 = 200_000.0;
const ALVO_RSS_MB: f64 = 200.0;

/// What one run of the binary took.
struct Medida {
    segundos: f64,
    pico_mb: f64,
}

/// Runs `carapi-server args…`, sampling its `VmHWM` until it exits.
fn medir(args: &[&str]) -> Medida {
    // Built (by cargo, when stale) before the clock starts: the figure is the load alone.
    crate::binary::server_bin();
    let inicio = Instant::now();
    let mut filho = crate::binary::command(args)
        .args(["--sem-progresso"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("carapi-server starts");
    let status = format!("/proc/{}/status", filho.id());
    let mut pico_kb = 0u64;
    loop {
        if let Some(kb) = std::fs::read_to_string(&status)
            .ok()
            .and_then(|s| vm_hwm_kb(&s))
        {
            pico_kb = pico_kb.max(kb);
        }
        if filho.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let segundos = inicio.elapsed().as_secs_f64();
    let saida = filho.wait_with_output().expect("output");
    assert!(
        saida.status.success(),
        "carapi-server {args:?}: {}",
        String::from_utf8_lossy(&saida.stderr)
    );
    Medida {
        segundos,
        pico_mb: pico_kb as f64 / 1024.0,
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
fn write_csv(caminho: &Path, n: usize) {
    let f = std::fs::File::create(caminho).expect("create CSV");
    carapi_loader::import::write_csv(std::io::BufWriter::new(&f), Synthetic::new(n, 99))
        .expect("write CSV");
    f.sync_all().expect("sync CSV");
}

/// Runs `carapi-server args…` `vezes` times on a fresh base each (`prepare(i)` gives run
/// `i`'s arguments and leaves its folder ready): the median time and the largest peak RSS.
fn repetir(vezes: usize, mut prepare: impl FnMut(usize) -> Vec<String>) -> (Medida, Vec<f64>) {
    let mut medidas: Vec<Medida> = (0..vezes)
        .map(|i| {
            let args = prepare(i);
            medir(&args.iter().map(String::as_str).collect::<Vec<_>>())
        })
        .collect();
    let tempos: Vec<f64> = medidas.iter().map(|m| m.segundos).collect();
    let pico = medidas.iter().map(|m| m.pico_mb).fold(0.0, f64::max);
    medidas.sort_by(|a, b| a.segundos.total_cmp(&b.segundos));
    let mediana = medidas.swap_remove(medidas.len() / 2);
    (
        Medida {
            segundos: mediana.segundos,
            pico_mb: pico,
        },
        tempos,
    )
}

fn figura(nome: &'static str, n: usize, (m, tempos): &(Medida, Vec<f64>), sqlite: bool) -> Figura {
    let per_second = n as f64 / m.segundos;
    let ok = !sqlite || (per_second >= ALVO_POR_SEGUNDO && m.pico_mb <= ALVO_RSS_MB);
    let runs: Vec<String> = tempos.iter().map(|t| format!("{t:.1}")).collect();
    Figura {
        nome,
        medido: format!(
            "{n} records in {:.1} s (median of {} s) = {:.0} records/s, peak RSS {:.0} MB",
            m.segundos,
            runs.join(", "),
            per_second,
            m.pico_mb
        ),
        referencia: format!("{ALVO_POR_SEGUNDO:.0} records/s, {ALVO_RSS_MB:.0} MB"),
        ratio: per_second / ALVO_POR_SEGUNDO,
        alvo: if sqlite { ">= 1 and <= 200 MB" } else { "info" },
        ok,
    }
}

pub async fn run() -> Vec<Figura> {
    let n: usize = std::env::var("CARAPI_ESCALA_N")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(N_PADRAO);
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite = |nome: &str| format!("sqlite://{}", dir.path().join(nome).display());
    let n_texto = n.to_string();
    let mut figuras = Vec::new();

    // On a shared 2-core machine one run can be off by a third: the median of a few.
    let vezes = if n <= 2_000_000 { 3 } else { 1 };
    let m = repetir(vezes, |i| {
        [
            "seed",
            "--synthetic",
            &n_texto,
            "--database",
            &sqlite(&format!("seed{i}.db")),
        ]
        .map(str::to_owned)
        .to_vec()
    });
    figuras.push(figura("Scale: `seed --synthetic N`, SQLite", n, &m, true));

    let csv = dir.path().join("imoveis.csv");
    write_csv(&csv, n);
    let caminho = csv.display().to_string();
    let m = repetir(vezes, |i| {
        [
            "import",
            &caminho,
            "--database",
            &sqlite(&format!("import{i}.db")),
        ]
        .map(str::to_owned)
        .to_vec()
    });
    std::fs::remove_file(&csv).ok();
    figuras.push(figura(
        "Scale: `import` of an N-row CSV, SQLite",
        n,
        &m,
        true,
    ));

    if let Some(admin) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) {
        let nome = format!("carapi_escala_{}", std::process::id());
        let url = carapi_tests::pg::with_database(&admin, &nome);
        let m = repetir(1, |_| {
            ["seed", "--synthetic", &n_texto, "--database", &url]
                .map(str::to_owned)
                .to_vec()
        });
        figuras.push(figura(
            "Scale: `seed --synthetic N`, PostgreSQL (info)",
            n,
            &m,
            false,
        ));
        carapi_tests::pg::drop_database(&admin, &nome).await;
    } else {
        println!("scale: DATABASE_URL not set; no PostgreSQL row");
    }
    figuras
}
