//! Figure: a new client's p99 while one address holds 2,000 idle sockets to the server, reopening
//! each as the server closes it (a host that tries to take every connection). The victim, from
//! another loopback address (127.0.0.2), opens a new connection per request (`GET /v1/saldo`)
//! for [`DURATION`]; the reference is the same victim with no attack. Target: p99 < 50 ms.
//!
//! The server has its defaults for connections (1,000 in all, 100 per address; with
//! `CARAPI_ATAQUE_SEM_LIMITE` set, no per-address bound, as before there was one); the bench
//! raises its own open-file limit to fit both ends of the 2,000 sockets. Loopback only, bounded
//! in time ([`DURATION`] plus the set-up) and in sockets ([`SOCKETS`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use carapi_tests::Environment;
use hdrhistogram::Histogram;
use rust_decimal::Decimal;
use tokio::io::AsyncReadExt;

use crate::Figure;

/// Idle sockets of the attacker.
const SOCKETS: usize = 2_000;
/// How long the victim measures, with and without the attack.
const DURATION: Duration = Duration::from_secs(10);
/// The attacker's pause before reopening a socket the server closed.
const REOPEN: Duration = Duration::from_millis(10);

/// Raises this process's soft limit of open files to `n` (at most the hard limit).
pub(crate) fn raise_open_file_limit(n: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < n
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, n.min(hard), hard);
    }
}

/// The victim: requests on new connections from 127.0.0.2 for [`DURATION`]; the latency
/// histogram (µs) and the requests that failed.
async fn victim(base: &str, key: &str) -> (Histogram<u64>, u64) {
    let client = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    let mut faults = 0;
    let end = Instant::now() + DURATION;
    while Instant::now() < end {
        let t = Instant::now();
        let ok = client
            .get(format!("{base}/v1/saldo"))
            .bearer_auth(key)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        let us = u64::try_from(t.elapsed().as_micros()).unwrap_or(u64::MAX);
        h.saturating_record(us);
        if !ok {
            faults += 1;
        }
    }
    (h, faults)
}

/// One attacking socket: connects from 127.0.0.1, sends nothing, reconnects when closed.
async fn attacker(destination: SocketAddr, stop: Arc<AtomicBool>, openings: Arc<AtomicU64>) {
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        if let Ok(mut s) = tokio::net::TcpStream::connect(destination).await {
            openings.fetch_add(1, Ordering::Relaxed);
            let _ = tokio::time::timeout(Duration::from_secs(1), async {
                while !matches!(s.read(&mut buf).await, Ok(0) | Err(_)) {}
            })
            .await;
            if stop.load(Ordering::Relaxed) {
                break;
            }
            // Still open after a second: keep it until the server closes it.
            while !stop.load(Ordering::Relaxed)
                && tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf))
                    .await
                    .is_err()
            {}
        }
        tokio::time::sleep(REOPEN).await;
    }
}

fn summary(h: &Histogram<u64>, faults: u64) -> String {
    format!(
        "p99 {:.1} ms, p50 {:.1} ms, max {:.0} ms, {} requests, {} failed",
        h.value_at_quantile(0.99) as f64 / 1000.0,
        h.value_at_quantile(0.5) as f64 / 1000.0,
        h.max() as f64 / 1000.0,
        h.len(),
        faults
    )
}

pub async fn run() -> Vec<Figure> {
    raise_open_file_limit((SOCKETS as u64) * 2 + 1_024);
    // CARAPI_ATAQUE_SEM_LIMITE=1: no per-address bound, to see the attack without it.
    let without_limite = std::env::var_os("CARAPI_ATAQUE_SEM_LIMITE").is_some();
    let env = Environment::com(|c| {
        c.rate_limit = None;
        if without_limite {
            c.edge.connections_per_address = None;
        }
    })
    .await;
    let key = env.conta(Decimal::from(100)).await.api_key;
    let base = env.server.base_url();
    let (without, failures_without) = victim(&base, &key).await;

    let stop = Arc::new(AtomicBool::new(false));
    let openings = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..SOCKETS)
        .map(|_| tokio::spawn(attacker(env.server.addr(), stop.clone(), openings.clone())))
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (com, failures_with) = victim(&base, &key).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        let _ = t.await;
    }
    eprintln!(
        "attack: {} sockets, {} connections opened by the attacker",
        SOCKETS,
        openings.load(Ordering::Relaxed)
    );
    let p99 = com.value_at_quantile(0.99) as f64 / 1000.0;
    let p99_without = without.value_at_quantile(0.99) as f64 / 1000.0;
    vec![Figure {
        name: "attack: another address's p99 during 2,000 idle sockets from one address",
        measured: summary(&com, failures_with),
        reference: summary(&without, failures_without),
        ratio: p99 / p99_without.max(0.001),
        target: "p99 < 50 ms",
        ok: p99 < 50.0 && failures_with == 0,
    }]
}
