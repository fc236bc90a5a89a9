//! Figure 5: one account cannot stall the others. An account with 1,000,000 history rows
//! (inserted directly, as a year of traffic would leave them) hammers `GET /v1/historico` and
//! `GET /v1/uso` at its rate limit (10 requests/s, open loop: a slow answer does not slow the
//! attacker) with every filter combination, `busca` and deep pages included. Meanwhile other
//! accounts read `GET /v1/saldo` and make paid `GET /v1/proprietario/{doc}` lookups at their
//! own limit. Their p50/p99 while the attack runs are compared with the same load idle.
//! Target: p99 within 2x of idle. Before the attack, each history filter's page is timed
//! alone on that account (target: p50 <= 5 ms for any filter).
//!
//! ```sh
//! cargo bench -p carapi-tests --bench figures -- isolation
//! CARAPI_BENCH_LINHAS=200000 cargo bench -p carapi-tests --bench figures -- isolation
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use carapi_tests::Environment;
use hdrhistogram::Histogram;
use rust_decimal::Decimal;
use tokio::sync::Mutex;

use crate::Figure;

const DEFAULT_ROWS: i64 = 1_000_000;
const VICTIMS: usize = 4;
/// Requests per second of each victim (under the contract's 10/s).
const VICTIM_PACE: u64 = 8;
const PHASE: Duration = Duration::from_secs(20);
const OPENAPI_DOCUMENT: &str = "52998224725";

/// The attacker's requests, in turn.
const ATTACK_PATHS: [&str; 8] = [
    "/v1/historico?status=sucesso",
    "/v1/historico?status=erro&endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D",
    "/v1/historico?busca=4E2",
    "/v1/historico?page=49000&size=20",
    "/v1/historico?endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D%2Fcompleto&page=2000&size=100",
    "/v1/uso",
    "/v1/historico?busca=zz&status=erro",
    "/v1/historico",
];

/// Inserts `n` history rows for `conta` straight into the SQLite file.
async fn seed(url: &str, conta: i64, n: i64) {
    let pool = sqlx::SqlitePool::connect(url).await.expect("sqlite");
    let t0 = chrono::Utc::now().timestamp_millis() - n * 1000;
    sqlx::query(
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2),
         g AS (SELECT i, CASE i % 4 WHEN 0 THEN '/v1/car/{codigo}'
                    WHEN 1 THEN '/v1/car/{codigo}/completo' WHEN 2 THEN '/v1/car/{codigo}/recibo'
                    ELSE '/v1/proprietario/{cpf_cnpj}' END AS endpoint,
                    CASE WHEN i % 3 = 0 THEN 200 ELSE 404 END AS status FROM s)
         INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado,
             valor_centavos, ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status)
         SELECT ?1, ?3 + i * 1000, endpoint, printf('DF-5300108-%032X', i), status, status = 200,
                CASE WHEN status = 200 THEN 100 ELSE 0 END, i,
                ROW_NUMBER() OVER (PARTITION BY endpoint ORDER BY i),
                ROW_NUMBER() OVER (PARTITION BY status = 200 ORDER BY i),
                ROW_NUMBER() OVER (PARTITION BY endpoint, status = 200 ORDER BY i)
         FROM g ORDER BY i",
    )
    .bind(conta)
    .bind(n)
    .bind(t0)
    .execute(&pool)
    .await
    .expect("seed history");
    pool.close().await;
}

/// Latencies of the victims' two kinds of request.
struct Measured {
    saldo: Histogram<u64>,
    proprietario: Histogram<u64>,
    faults: u64,
}

async fn victims(base: &str, keys: &[String]) -> Measured {
    let measurement = Arc::new(Mutex::new(Measured {
        saldo: Histogram::new(3).expect("histogram"),
        proprietario: Histogram::new(3).expect("histogram"),
        faults: 0,
    }));
    let end = Instant::now() + PHASE;
    let tasks: Vec<_> = keys
        .iter()
        .map(|key| {
            let (key, base, measurement) = (key.clone(), base.to_owned(), measurement.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut tick = tokio::time::interval(Duration::from_millis(1000 / VICTIM_PACE));
                let mut n = 0u64;
                while Instant::now() < end {
                    tick.tick().await;
                    n += 1;
                    let pago = n.is_multiple_of(2);
                    let url = if pago {
                        format!("{base}/v1/proprietario/{OPENAPI_DOCUMENT}")
                    } else {
                        format!("{base}/v1/saldo")
                    };
                    let t = Instant::now();
                    let ok = http
                        .get(&url)
                        .bearer_auth(&key)
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success());
                    let us = t.elapsed().as_micros() as u64;
                    let mut m = measurement.lock().await;
                    if !ok {
                        m.faults += 1;
                    }
                    let h = if pago {
                        &mut m.proprietario
                    } else {
                        &mut m.saldo
                    };
                    h.record(us.max(1)).expect("record");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("victim");
    }
    Arc::try_unwrap(measurement)
        .ok()
        .expect("sole owner")
        .into_inner()
}

/// The attacker: 10 requests/s, open loop, until `parar` is set; returns (sent, non-200).
fn attack(
    base: String,
    key: String,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<(u64, u64)> {
    tokio::spawn(async move {
        let http = reqwest::Client::new();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut pending = Vec::new();
        let mut i = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            tick.tick().await;
            let (http, url, key) = (
                http.clone(),
                format!("{base}{}", ATTACK_PATHS[i % ATTACK_PATHS.len()]),
                key.clone(),
            );
            pending.push(tokio::spawn(async move {
                http.get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0)
            }));
            i += 1;
        }
        let mut bad_ones = 0;
        for p in &mut pending {
            if p.await.unwrap_or(0) != 200 {
                bad_ones += 1;
            }
        }
        (pending.len() as u64, bad_ones)
    })
}

/// Time of one history page for each of the attacker's `GET /v1/historico` filters over its
/// `linhas` rows, sequentially at 9 requests/s (under the key's limit): the slowest filter's
/// p50 against the 5 ms target.
async fn historico_pages(base: &str, key: &str, lines: i64) -> Figure {
    const TIMES: usize = 9;
    let http = reqwest::Client::new();
    let mut p50s = Vec::new();
    for path in ATTACK_PATHS
        .iter()
        .filter(|p| p.starts_with("/v1/historico"))
    {
        let mut durations = Vec::with_capacity(TIMES);
        for _ in 0..TIMES {
            let t = Instant::now();
            let r = http
                .get(format!("{base}{path}"))
                .bearer_auth(key)
                .send()
                .await
                .expect("history page");
            assert_eq!(r.status(), 200, "{path}");
            let _ = r.bytes().await;
            durations.push(t.elapsed());
            tokio::time::sleep(Duration::from_millis(111)).await;
        }
        durations.sort();
        p50s.push((durations[TIMES / 2], *path));
    }
    p50s.sort();
    let (worst, worst_path) = p50s[p50s.len() - 1];
    let (best, _) = p50s[0];
    let worst_ms = worst.as_secs_f64() * 1000.0;
    Figure {
        name: "history page of a 1M-row account, slowest filter p50",
        measured: format!("{worst_ms:.2} ms ({worst_path}, {lines} rows)"),
        reference: format!("{:.2} ms (fastest filter)", best.as_secs_f64() * 1000.0),
        ratio: worst_ms / 5.0,
        target: "<= 5 ms for any filter",
        ok: worst_ms <= 5.0,
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

pub async fn run() -> Vec<Figure> {
    let lines: i64 = std::env::var("CARAPI_BENCH_LINHAS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_ROWS);
    let env = Environment::new().await;
    let base = env.server.base_url();
    let attacker = env.conta(Decimal::from(10)).await;
    let t = Instant::now();
    seed(&env.database_url, attacker.conta_id.0, lines).await;
    eprintln!(
        "isolation: {lines} history rows seeded in {:.1?}",
        t.elapsed()
    );
    let page = historico_pages(&base, &attacker.api_key, lines).await;
    let mut keys = Vec::new();
    for _ in 0..VICTIMS {
        keys.push(env.conta(Decimal::from(100_000)).await.api_key);
    }
    let idle = victims(&base, &keys).await;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let assault = attack(base.clone(), attacker.api_key.clone(), stop.clone());
    let loaded = victims(&base, &keys).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (sent, bad_ones) = assault.await.expect("attacker");
    eprintln!(
        "isolation: attacker sent {sent} history/usage requests, {bad_ones} not 200; victims' failures idle {} / attacked {}",
        idle.faults, loaded.faults
    );
    let figure = |name, o: &Histogram<u64>, c: &Histogram<u64>| {
        let ratio = c.value_at_quantile(0.99) as f64 / o.value_at_quantile(0.99).max(1) as f64;
        Figure {
            name,
            measured: format!(
                "p50 {:.2} ms, p99 {:.2} ms (attacked, {lines} rows)",
                ms(c.value_at_quantile(0.5)),
                ms(c.value_at_quantile(0.99))
            ),
            reference: format!(
                "p50 {:.2} ms, p99 {:.2} ms (idle)",
                ms(o.value_at_quantile(0.5)),
                ms(o.value_at_quantile(0.99))
            ),
            ratio,
            target: "p99 <= 2x idle",
            ok: ratio <= 2.0 && loaded.faults == 0,
        }
    };
    vec![
        page,
        figure(
            "isolation: other account's GET /v1/saldo",
            &idle.saldo,
            &loaded.saldo,
        ),
        figure(
            "isolation: other account's paid GET /v1/proprietario",
            &idle.proprietario,
            &loaded.proprietario,
        ),
    ]
}
