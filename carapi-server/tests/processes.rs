//! Several server processes on one PostgreSQL database: the per-key rate limit holds across
//! them, the ledger stays exact, a record written by one is served by the others at once, and
//! the reconciliation lease has one holder at a time. Job leases are checked on SQLite too.
//! The PostgreSQL tests print a message and pass when `DATABASE_URL` is unset.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use carapi_sdk::{CpfCnpj, EndpointConsulta};
use carapi_service::store::PgStore;
use carapi_service::store::prelude::*;
use carapi_service::{Centavos, NovaConta};
use chrono::{Duration, Utc};
use rust_decimal::Decimal;

use crate::helpers::{CODIGO, copies_with_owner};
use crate::postgres::{TestDatabase, backends};

/// A `carapi-server serve` child process, killed when dropped.
struct Process {
    child: Child,
    base: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the real binary on `url` with an ephemeral port; returns once it listens.
fn serve(url: &str) -> Process {
    let mut child = Command::new(env!("CARGO_BIN_EXE_carapi-server"))
        .args(["serve", "--database", url, "--bind", "127.0.0.1:0"])
        .arg("--sem-dados-embutidos")
        .env_remove("CARAPI_RATE_LIMIT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn carapi-server");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("carapi-server ended before listening")
            .unwrap();
        if let Some(i) = line.find("ouvindo em http://") {
            break line[i + "ouvindo em ".len()..].trim().to_owned();
        }
    };
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Process { child, base }
}

async fn prepare(database: &TestDatabase) -> Arc<PgStore> {
    let store = database.store().await;
    carapi_service::startup::load_bundled_data(store.as_ref())
        .await
        .unwrap();
    store
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn two_processes_on_one_postgres_keep_the_per_key_rate_and_the_ledger() {
    let test = "two_processes_on_one_postgres_keep_the_per_key_rate_and_the_ledger";
    let Some(database) = TestDatabase::create(test).await else {
        return;
    };
    let store = prepare(&database).await;
    let conta = carapi_service::create_conta(
        store.as_ref(),
        NovaConta {
            saldo: Decimal::from(100),
            ..NovaConta::default()
        },
    )
    .await
    .unwrap();
    let processes = [serve(&database.url), serve(&database.url)];
    let http = reqwest::Client::new();
    let burst = |path: String, n: usize| {
        let requests = (0..n).map(|i| {
            let url = format!("{}{path}", processes[i % 2].base);
            let req = http.get(url).bearer_auth(&conta.api_key);
            async move {
                let r = req.send().await.unwrap();
                (r.status().as_u16(), r.headers().contains_key("retry-after"))
            }
        });
        futures::future::join_all(requests)
    };
    let one_second = || tokio::time::sleep(std::time::Duration::from_millis(1100));
    // Open the connections first (these count toward the rate; most are refused), then rest a
    // second so the key is back at full burst.
    burst("/v1/saldo".to_owned(), 60).await;
    one_second().await;

    // 1. The rate, on a cheap endpoint over open connections.
    let n = 60;
    let start = Instant::now();
    let responses = burst("/v1/saldo".to_owned(), n).await;
    let elapsed = start.elapsed().as_secs_f64();
    let accepted = responses.iter().filter(|(s, _)| *s == 200).count();
    let refused = responses.iter().filter(|(s, r)| *s == 429 && *r).count();
    assert_eq!(accepted + refused, n, "{responses:?}");
    // GCRA, 10/s with a burst of 10, on both processes together: at most 10 at once plus one
    // per 100 ms that passed (and one of slack for the boundary). With a limiter per process
    // it would be twice that.
    let teto = 10 + (elapsed * 10.0).ceil() as usize + 1;
    println!("{accepted} of {n} accepted in {elapsed:.3} s (ceiling {teto})");
    assert!(
        (10..=teto).contains(&accepted),
        "{accepted} accepted in {elapsed:.3} s by two processes (ceiling {teto})"
    );

    // 2. The ledger, with charged lookups racing on both processes.
    one_second().await;
    let responses = burst(format!("/v1/car/{CODIGO}"), 40).await;
    let cobradas = responses.iter().filter(|(s, _)| *s == 200).count();
    assert!(cobradas >= 10, "{responses:?}");
    assert!(responses.iter().all(|(s, _)| *s == 200 || *s == 429));
    let ledger = store.ledger(conta.conta_id).await.unwrap().unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    let preco = carapi_service::money::tarifa::preco(false, EndpointConsulta::CarBasico);
    assert_eq!(ledger.debits, Centavos::new(preco.get() * cobradas as i64));
    assert_eq!(
        Some(ledger.saldo),
        Centavos::new(10_000).checked_sub(ledger.debits).ok()
    );
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn a_record_written_by_one_process_is_served_by_the_others_at_once() {
    let test = "a_record_written_by_one_process_is_served_by_the_others_at_once";
    let Some(database) = TestDatabase::create(test).await else {
        return;
    };
    let store = prepare(&database).await;
    let conta = carapi_service::create_conta(store.as_ref(), NovaConta::default())
        .await
        .unwrap();
    let p = serve(&database.url);
    let http = reqwest::Client::new();
    let fresh = copies_with_owner(1, &CpfCnpj::from_base("PROCESSO001A").unwrap()).remove(0);
    let url = format!("{}/v1/car/{}", p.base, fresh.codigo_car.as_str());
    let r = http.get(&url).bearer_auth(&conta.api_key).send().await;
    assert_eq!(r.unwrap().status(), 404);
    // Written by "another process" (this one, through its own store): a miss is never cached.
    store.write_imoveis(&[fresh]).await.unwrap();
    let r = http.get(&url).bearer_auth(&conta.api_key).send().await;
    assert_eq!(r.unwrap().status(), 200);
}

#[tokio::test]
async fn job_lease_has_one_holder_at_a_time_on_both_stores() {
    for l in backends("job_lease_has_one_holder_at_a_time_on_both_stores").await {
        let s = l.store.as_ref();
        let n = l.name;
        let t0 = Utc::now();
        let until = t0 + Duration::seconds(60);
        assert!(s.reserve_task("job", "a", t0, until).await.unwrap(), "{n}");
        assert!(!s.reserve_task("job", "b", t0, until).await.unwrap(), "{n}");
        // the holder renews
        let t1 = t0 + Duration::seconds(30);
        let until = t1 + Duration::seconds(60);
        assert!(s.reserve_task("job", "a", t1, until).await.unwrap(), "{n}");
        // still held at t0 + 60 s (renewed to t0 + 90 s)
        let t2 = t0 + Duration::seconds(60);
        let fresh = t2 + Duration::seconds(60);
        assert!(!s.reserve_task("job", "b", t2, fresh).await.unwrap(), "{n}");
        // another job is independent
        assert!(
            s.reserve_task("outro", "b", t2, fresh).await.unwrap(),
            "{n}"
        );
        // expired: another holder takes it, and the old one cannot
        let t3 = t0 + Duration::seconds(90);
        let fresh = t3 + Duration::seconds(60);
        assert!(s.reserve_task("job", "b", t3, fresh).await.unwrap(), "{n}");
        assert!(!s.reserve_task("job", "a", t3, fresh).await.unwrap(), "{n}");
    }
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn concurrent_lease_takers_on_two_postgres_pools_get_one_holder() {
    let test = "concurrent_lease_takers_on_two_postgres_pools_get_one_holder";
    let Some(database) = TestDatabase::create(test).await else {
        return;
    };
    let (a, b) = (database.store().await, database.store().await);
    let t0 = Utc::now();
    let until = t0 + Duration::seconds(60);
    let attempts = (0..20).map(|i| {
        let s = if i % 2 == 0 { a.clone() } else { b.clone() };
        async move {
            s.reserve_task("reconciliacao", &format!("p{i}"), t0, until)
                .await
                .unwrap()
        }
    });
    let times = futures::future::join_all(attempts).await;
    assert_eq!(times.iter().filter(|v| **v).count(), 1, "{times:?}");
}
