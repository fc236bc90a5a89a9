//! A small closed-loop load client: `conexoes` tasks share one HTTP/1.1 connection pool and send
//! GET requests back to back for `duracao`, recording every latency in an HDR histogram.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// What one load run measured.
pub struct LoadResult {
    pub per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub faults: u64,
}

/// Sends `GET url` with the bearer keys in round-robin from `conexoes` concurrent tasks.
pub async fn generate(
    url: &str,
    keys: Arc<Vec<String>>,
    connections: usize,
    duration: Duration,
) -> LoadResult {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .build()
        .expect("client");
    let next_one = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let end = start + duration;
    let tasks: Vec<_> = (0..connections)
        .map(|_| {
            let (http, url, keys, next_one) =
                (http.clone(), url.to_owned(), keys.clone(), next_one.clone());
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3).expect("histogram");
                let mut faults = 0u64;
                while Instant::now() < end {
                    let chave = &keys[next_one.fetch_add(1, Ordering::Relaxed) % keys.len()];
                    let t = Instant::now();
                    let ok = match http.get(&url).bearer_auth(chave).send().await {
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
        let (h, f) = t.await.expect("load task");
        total.add(h).expect("same histogram bounds");
        faults += f;
    }
    let seconds = start.elapsed().as_secs_f64();
    LoadResult {
        per_second: total.len() as f64 / seconds,
        p50: Duration::from_micros(total.value_at_quantile(0.50)),
        p99: Duration::from_micros(total.value_at_quantile(0.99)),
        faults,
    }
}
