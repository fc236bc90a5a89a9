//! Scale figures of the lookups on SQLite, the release `carapi-server serve` in a process of
//! its own (per-key limiter off), driven from this one over 8 keep-alive connections, as the
//! issue measured them with wrk:
//!
//! - cold lookups: charged `GET /v1/car/{code}` of distinct codes drawn at random, each looked
//!   up once (neither the server's record cache nor SQLite's page cache has them), over a 10k
//!   base (all 10,000 codes) and a large one (1M records, 300,000 codes;
//!   `CARAPI_BENCH_GRANDE=N` and `CARAPI_BENCH_CODIGOS=K` change them); p50/p99 of each and
//!   the ratio of the p50s (targets: ratio <= 1.2, p99 <= 10 ms);
//! - the same 2,000 codes over the 10k base again and again for 10 s (all cached): p50/p99
//!   against the 0.36 / 17.6 ms;
//! - `GET /v1/proprietario/{doc}` for an owner of 10,000 CARs in the large base (200
//!   returned, `truncado`): p50 over sequential calls (target <= 5 ms).
//!
//! The bases are built by `carapi-server seed --synthetic N --dono-grande 10000`.
//! Filter word: `cold` (`cargo bench -p carapi-tests --bench figures -- cold`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::Figure;
use crate::binary::{Server, conta, run_bin};

const SMALL: usize = 10_000;
const LARGE: usize = 1_000_000;
const LARGE_CODIGOS: usize = 300_000;
const HOT: usize = 2_000;
const CONNECTIONS: usize = 8;
const OWNER_CARS: usize = 10_000;
/// The first large owner of a synthetic base (`dados::large_owners`).
const OWNER: &str = "98765432000198";

/// A base of `n` synthetic records whose first large owner has [`OWNER_CARS`] CARs.
fn base(dir: &tempfile::TempDir, n: usize) -> String {
    let url = format!("sqlite://{}", dir.path().join(format!("{n}.db")).display());
    crate::binary::server_bin();
    let start = Instant::now();
    run_bin(&[
        "seed",
        "--synthetic",
        &n.to_string(),
        "--seed",
        "1",
        "--dono-grande",
        &OWNER_CARS.min(n).to_string(),
        "--database",
        &url,
        "--sem-progresso",
    ]);
    eprintln!("cold: {n} records seeded in {:.1?}", start.elapsed());
    url
}

/// `k` codes of the base at `url` drawn at random.
async fn sample(url: &str, k: usize) -> Vec<String> {
    let pool = sqlx::SqlitePool::connect(url).await.expect("sqlite");
    let v = sqlx::query_scalar("SELECT codigo_car FROM imoveis ORDER BY random() LIMIT ?1")
        .bind(k as i64)
        .fetch_all(&pool)
        .await
        .expect("sample");
    pool.close().await;
    v
}

/// What a load measured.
struct Load {
    p50: Duration,
    p99: Duration,
    per_second: f64,
    faults: usize,
}

impl Load {
    fn text(&self) -> String {
        format!(
            "p50 {}, p99 {}, {:.0}/s{}",
            ms(self.p50),
            ms(self.p99),
            self.per_second,
            if self.faults > 0 {
                format!(", {} FAILED", self.faults)
            } else {
                String::new()
            }
        )
    }
}

/// Charged lookups of `codigos` from [`CONNECTIONS`] tasks, each code once, or round and round
/// until `ate` when given.
async fn query(srv: &Server, chave: &str, codigos: Vec<String>, until: Option<Instant>) -> Load {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()
        .expect("client");
    let (codigos, next_item) = (Arc::new(codigos), Arc::new(AtomicUsize::new(0)));
    let start = Instant::now();
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (http, base, chave) = (http.clone(), srv.base_url.clone(), chave.to_owned());
            let (codigos, next_item) = (codigos.clone(), next_item.clone());
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3).expect("histogram");
                let mut faults = 0;
                loop {
                    let i = next_item.fetch_add(1, Ordering::Relaxed);
                    let c = match until {
                        Some(end) if Instant::now() < end => &codigos[i % codigos.len()],
                        Some(_) => break,
                        None => match codigos.get(i) {
                            Some(c) => c,
                            None => break,
                        },
                    };
                    let t = Instant::now();
                    let r = http
                        .get(format!("{base}/v1/car/{c}"))
                        .bearer_auth(&chave)
                        .send()
                        .await;
                    let ok = match r {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    if ok {
                        hist.record(t.elapsed().as_micros() as u64).ok();
                    } else {
                        faults += 1;
                    }
                }
                (hist, faults)
            })
        })
        .collect();
    let mut total = Histogram::<u64>::new(3).expect("histogram");
    let mut faults = 0;
    for t in tasks {
        let (h, f) = t.await.expect("task");
        total.add(h).expect("same bounds");
        faults += f;
    }
    let q = |x| Duration::from_micros(total.value_at_quantile(x));
    Load {
        p50: q(0.50),
        p99: q(0.99),
        per_second: total.len() as f64 / start.elapsed().as_secs_f64(),
        faults,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// Sequential owner lookups of [`OWNER`]: p50 and p99 after 10 warm-up calls.
async fn proprietario(srv: &Server, chave: &str) -> (Duration, Duration) {
    let http = reqwest::Client::new();
    let url = format!("{}/v1/proprietario/{OWNER}", srv.base_url);
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    for i in 0..110 {
        let t = Instant::now();
        let r = http
            .get(&url)
            .bearer_auth(chave)
            .send()
            .await
            .expect("send");
        let v: serde_json::Value = r.json().await.expect("json");
        assert_eq!(
            (v["total"].as_u64(), &v["truncado"]),
            (Some(200), &serde_json::json!(true)),
            "{v}"
        );
        if i >= 10 {
            hist.record(t.elapsed().as_micros() as u64).ok();
        }
    }
    let q = |x| Duration::from_micros(hist.value_at_quantile(x));
    (q(0.5), q(0.99))
}

fn env(name: &str, pattern: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(pattern)
}

pub async fn run() -> Vec<Figure> {
    let large = env("CARAPI_BENCH_GRANDE", LARGE);
    let k_large = env("CARAPI_BENCH_CODIGOS", LARGE_CODIGOS).min(large);
    let dir = tempfile::tempdir().expect("temporary folder");

    let url = base(&dir, SMALL);
    let chave = conta(&url, "100000000");
    let codigos = sample(&url, SMALL).await;
    let srv = Server::start(&url);
    let cold_p = query(&srv, &chave, codigos.clone(), None).await;
    let hot = query(
        &srv,
        &chave,
        codigos[..HOT].to_vec(),
        Some(Instant::now() + Duration::from_secs(10)),
    )
    .await;
    drop(srv);

    let url = base(&dir, large);
    let chave = conta(&url, "100000000");
    let codigos = sample(&url, k_large).await;
    let srv = Server::start(&url);
    let cold_g = query(&srv, &chave, codigos, None).await;
    let (owner_p50, owner_p99) = proprietario(&srv, &chave).await;
    drop(srv);

    let ratio = cold_g.p50.as_secs_f64() / cold_p.p50.as_secs_f64().max(1e-9);
    vec![
        Figure {
            name: "cold lookup p50, large base / 10k base",
            measured: format!("{large} records, {k_large} codes: {}", cold_g.text()),
            reference: format!("10k records, 10k codes: {}", cold_p.text()),
            ratio,
            target: "<= 1.2, p99 <= 10 ms",
            ok: ratio <= 1.2
                && cold_g.p99 <= Duration::from_millis(10)
                && cold_g.faults + cold_p.faults == 0,
        },
        Figure {
            name: "2,000 codes over the 10k base, cached, p99",
            measured: hot.text(),
            reference: "issue: p50 0.36 ms, p99 17.6 ms".into(),
            ratio: hot.p99.as_secs_f64() * 1000.0 / 17.6,
            target: "<= 1 (unchanged or better)",
            ok: hot.p99 <= Duration::from_micros(17_600) && hot.faults == 0,
        },
        Figure {
            name: "owner of 10,000 CARs (200 + truncado), p50",
            measured: format!("{} (p99 {})", ms(owner_p50), ms(owner_p99)),
            reference: "5 ms".into(),
            ratio: owner_p50.as_secs_f64() * 1000.0 / 5.0,
            target: "<= 5 ms",
            ok: owner_p50 <= Duration::from_millis(5),
        },
    ]
}
