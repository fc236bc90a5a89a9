//! Figure 10 (`archive`): the archive of paid answers (SDK feature `archive`).
//!
//! (a) A lookup answered from a 1M-entry SQLite archive: the file is built once by direct SQL
//!     in one transaction (the archive's own schema, created by `Archive::open`; synthetic
//!     basic answers with their content and entry hashes, which a lookup checks before it
//!     serves an answer; the chain's links are not computed) and cached at
//!     `target/bench-acervo-1m-v2.sqlite3`; then `CARAPI_ACERVO_N` (default 10,000) random
//!     `Client::car` calls answered from it (no request), p50 and p99, against the bare
//!     `Archive::latest_entry` query. Goal p50 <= 1 ms.
//! (b) A batch of 1,000 charged lookups of distinct codes (all archive misses, every one bought
//!     and appended), 4 at a time, limiters off, with the archive on against off (best of three
//!     rounds each, alternating), against the in-process test double answering every request
//!     20 ms late, as the API does over a network (a lookup from Brazil to a server in Brazil
//!     takes tens of milliseconds). Goal: on at most 5% slower.
//! (e) 1,000 lookups in flight at once (the double answers each 200 ms late, the client's
//!     limiter off, its default 32 requests on the wire at a time): the process's threads and
//!     resident memory while they are all in flight, with a SQLite archive and, when
//!     `DATABASE_URL` is set, a PostgreSQL one, against the same lookups without an archive.
//!     For information: a lookup holds no thread while it waits.
//! (c) The same batch against the release `carapi-server` over loopback sockets on its own
//!     SQLite base, and (d) against the in-process test double with no delay: answers of about
//!     1 ms, where the archive's durable append per bought answer (its commit, about 0.1 ms on
//!     the answer's path) shows most. For information.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness, LegalBasis};
use carapi_sdk::{Client, CodigoCar};
use carapi_test_double::TestServer;
use futures::StreamExt;
use hdrhistogram::Histogram;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use crate::Figure;

const ENTRIES: u64 = 1_000_000;
const BATCH: usize = 1_000;

/// The synthetic code of entry `i`.
fn code(i: u64) -> String {
    format!("DF-5300108-{i:032X}")
}

pub async fn run() -> Vec<Figure> {
    let mut f = consultas().await;
    f.push(batch_double(Some(Duration::from_millis(20))).await);
    f.push(batch_server().await);
    f.push(batch_double(None).await);
    f.extend(in_flight().await);
    f
}

/// `Threads` and `VmRSS` (MB) of this process, from `/proc/self/status` (Linux).
fn threads_and_rss() -> (u64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:") as f64 / 1024.0)
}

/// Lookups in flight at once in figure (e).
const IN_FLIGHT: u64 = 1_000;

/// (e): threads and RSS with 1,000 lookups in flight, per archive, against none.
async fn in_flight() -> Vec<Figure> {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .expect("double");
    let dir = tempfile::tempdir().expect("dir");
    let conta = srv
        .conta()
        .saldo(Decimal::from(100_000))
        .create()
        .await
        .expect("account");
    srv.inject(carapi_test_double::Fault::delay(Duration::from_millis(200)).always());
    let mut sides: Vec<(&'static str, Option<Archive>)> = vec![
        ("no archive", None),
        (
            "SQLite archive",
            Some(Archive::open(dir.path().join("voo.sqlite3")).expect("archive")),
        ),
    ];
    if let Ok(url) = std::env::var("DATABASE_URL") {
        sides.push(("PostgreSQL archive", Some(postgres_archive(&url).await)));
    }
    let mut rows = Vec::new();
    let mut baseline = None;
    for (round, (side, archive)) in sides.into_iter().enumerate() {
        let (threads, rss) = measure_in_flight(&srv, &conta, round as u64, archive).await;
        let (base_threads, base_rss) = *baseline.get_or_insert((threads, rss));
        rows.push(Figure {
            name: match side {
                "SQLite archive" => {
                    "archive: 1,000 lookups in flight, SQLite archive (threads, RSS)"
                }
                "PostgreSQL archive" => {
                    "archive: 1,000 lookups in flight, PostgreSQL archive (threads, RSS)"
                }
                _ => "archive: 1,000 lookups in flight, no archive (threads, RSS)",
            },
            measured: format!("{threads} threads, {rss:.0} MB"),
            reference: format!("no archive: {base_threads} threads, {base_rss:.0} MB"),
            ratio: threads as f64 / base_threads.max(1) as f64,
            target: "info",
            ok: true,
        });
    }
    rows
}

/// Starts [`IN_FLIGHT`] lookups of new codes at once through a client with `archive`, reads
/// this process's threads and RSS while they are all in flight, then waits for them.
async fn measure_in_flight(
    srv: &TestServer,
    conta: &carapi_test_double::ContaCriada,
    round: u64,
    archive: Option<Archive>,
) -> (u64, f64) {
    let template = carapi_test_double::dados::bundled()
        .into_iter()
        .next()
        .expect("a bundled record");
    let records: Vec<_> = (0..IN_FLIGHT)
        .map(|i| {
            let mut r = template.clone();
            r.codigo_car =
                CodigoCar::parse(code(ENTRIES * 4 + round * IN_FLIGHT + i)).expect("code");
            r
        })
        .collect();
    srv.server()
        .state()
        .replace_imoveis(&records)
        .await
        .expect("records");
    // The client's default bound of requests in flight (32): the others wait in the SDK, as
    // lookups in flight in a service do (the double, like the real server, resets an address's
    // connections past 100).
    let mut b = srv.client_builder(conta).rate_limit(None);
    if let Some(a) = archive {
        let policy = ArchivePolicy::new(
            "bench",
            LegalBasis::LegitimateInterest,
            Freshness::MaxAge(Duration::from_secs(3600)),
        );
        b = b.archive(a, policy);
    }
    let client = b.build().expect("client");
    let tasks: Vec<_> = records
        .iter()
        .map(|r| {
            let (c, k) = (client.clone(), r.codigo_car.to_string());
            tokio::spawn(async move { c.car(&k).await.is_ok() })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let measured = threads_and_rss();
    let mut ok = 0u64;
    for t in tasks {
        ok += u64::from(t.await.unwrap_or(false));
    }
    assert_eq!(ok, IN_FLIGHT, "every lookup answered");
    measured
}

/// A PostgreSQL archive in a database of its own on `url`'s server.
async fn postgres_archive(url: &str) -> Archive {
    use sqlx::Connection;
    let name = carapi_tests::pg::unique_name("bench_acervo");
    let mut c = sqlx::PgConnection::connect(url)
        .await
        .expect("DATABASE_URL");
    sqlx::query(&format!("CREATE DATABASE \"{name}\""))
        .execute(&mut c)
        .await
        .expect("database");
    let db = carapi_tests::pg::with_database(url, &name);
    tokio::task::spawn_blocking(move || Archive::connect(&db).expect("archive"))
        .await
        .expect("join")
}

/// A basic answer as the API sends it (about 560 bytes).
fn body(codigo: &str, at: &str) -> String {
    format!(
        r#"{{"success":true,"cache":false,"dados":{{"codigoCar":"{codigo}","nomeImovel":"Fazenda Exemplo","areaTotalHa":"2,0131","dataCadastro":"09/05/2014 17:16:10","matriculaNumero":"12345","matriculaData":"01/02/2003","matriculaCartorio":"Cartório do 1º Ofício de Registro de Imóveis","tipoImovel":"IRU","municipio":"Brasília","uf":"Distrito Federal","codigoProtocolo":"DF-5300108-2014.05.09-1234","latitude":"15°47'38,00\" S","longitude":"47°52'58,00\" O","modulosFiscais":"0,4026"}},"dataConsulta":"{at}","dataExpiracao":null}}"#
    )
}

/// The cached 1M-entry archive file, built when absent or short.
fn archive_file() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-acervo-1m-v2.sqlite3");
    drop(Archive::open(&path).expect("archive file"));
    let conn = rusqlite::Connection::open(&path).expect("open");
    let have: i64 = conn
        .query_row("SELECT COALESCE(MAX(seq), 0) FROM entries", [], |r| {
            r.get(0)
        })
        .expect("count");
    if have as u64 >= ENTRIES {
        return path;
    }
    eprintln!(
        "archive: building {ENTRIES} entries in {} (once)",
        path.display()
    );
    let t = Instant::now();
    let at = chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    let mut conn = conn;
    let tx = conn.transaction().expect("tx");
    {
        let mut e = tx
            .prepare(
                "INSERT INTO entries (seq, operation, preco, data_consulta, bought_at, account, \
                 purpose, legal_basis, content_hash, prev_hash, hash) \
                 VALUES (?1, 'car', '1.00', ?2, ?2, '0123456789abcdef', 'bench', \
                 'interesse-legitimo', ?3, ?4, ?5)",
            )
            .expect("prepare");
        let mut c = tx
            .prepare("INSERT INTO contents (seq, chave, body) VALUES (?1, ?2, ?3)")
            .expect("prepare");
        let zeros = "0".repeat(64);
        for seq in (have as u64 + 1)..=ENTRIES {
            let k = code(seq);
            let b = body(&k, &at).into_bytes();
            let content = content_hash(&k, &b);
            let n = seq.to_string();
            let record = [
                n.as_str(),
                "car",
                "1.00",
                &at,
                &at,
                "0123456789abcdef",
                "bench",
                "interesse-legitimo",
                &content,
                &zeros,
            ];
            e.execute(rusqlite::params![
                seq as i64,
                at,
                content,
                zeros,
                entry_hash(&record)
            ])
            .expect("entry");
            c.execute(rusqlite::params![seq as i64, k, b])
                .expect("content");
        }
    }
    tx.commit().expect("commit");
    eprintln!("archive: built in {:.1} s", t.elapsed().as_secs_f64());
    path
}

/// The archive's content hash (the chain's format, `carapi-sdk/src/archive/chain.rs`).
fn content_hash(chave: &str, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(b"carapi-acervo-conteudo-v1\n");
    h.update(format!("{}:{chave}", chave.len()).as_bytes());
    h.update(body);
    hex(&h.finalize())
}

/// The archive's entry hash over its record's fields, in order.
fn entry_hash(fields: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(b"carapi-acervo-entrada-v1\n");
    for f in fields {
        h.update(format!("{}:{f}\n", f.len()).as_bytes());
    }
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// (a): the client's archived lookups and the bare query, p50 and p99.
async fn consultas() -> Vec<Figure> {
    let path = archive_file();
    let n: u64 = std::env::var("CARAPI_ACERVO_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let archive = Archive::open(&path).expect("open");
    let policy = ArchivePolicy::new(
        "bench",
        LegalBasis::LegitimateInterest,
        Freshness::MaxAge(Duration::from_secs(10 * 365 * 24 * 3600)),
    );
    // No request is sent: every lookup is answered from the archive (the URL is never dialled).
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key("car_bench")
        .archive(archive.clone(), policy)
        .build()
        .expect("client");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % ENTRIES + 1
    };
    let mut sdk = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    let mut bare = sdk.clone();
    for _ in 0..n {
        let k = code(next());
        let t = Instant::now();
        let a = client.car(&k).await.expect("from the archive");
        sdk.record(t.elapsed().as_micros().max(1) as u64).ok();
        assert_eq!(a.origin, carapi_sdk::Origin::Archive);
        let k = code(next());
        let t = Instant::now();
        let e = archive
            .latest_entry(carapi_sdk::EndpointConsulta::CarBasico, &k)
            .expect("query");
        bare.record(t.elapsed().as_micros().max(1) as u64).ok();
        assert!(e.is_some());
    }
    let p50 = ms(&sdk, 0.5);
    vec![Figure {
        name: "archive: lookup answered from a 1M-entry SQLite archive (SDK car)",
        measured: format!(
            "p50 {p50:.3} ms, p99 {:.3} ms ({n} lookups)",
            ms(&sdk, 0.99)
        ),
        reference: format!(
            "bare query p50 {:.3} ms, p99 {:.3} ms",
            ms(&bare, 0.5),
            ms(&bare, 0.99)
        ),
        ratio: p50,
        target: "p50 <= 1 ms",
        ok: p50 <= 1.0,
    }]
}

/// Timed rounds of each side: the best of three.
const ROUNDS: usize = 6;

/// (c): 1,000 bought lookups with the archive on against off, against the release server
/// binary over real sockets (its own SQLite base, its per-key limiter off).
async fn batch_server() -> Figure {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("sqlite://{}", dir.path().join("base.db").display());
    let n = (BATCH * ROUNDS).to_string();
    crate::binary::run_bin(&[
        "seed",
        "--synthetic",
        &n,
        "--seed",
        "1",
        "--database",
        &url,
        "--sem-progresso",
    ]);
    let key = crate::binary::conta(&url, "100000");
    let pool = sqlx::SqlitePool::connect(&url).await.expect("sqlite");
    let codes: Vec<String> = sqlx::query_scalar("SELECT codigo_car FROM imoveis ORDER BY 1")
        .fetch_all(&pool)
        .await
        .expect("codes");
    pool.close().await;
    let srv = crate::binary::Server::start(&url);
    let builder = || {
        Client::builder()
            .base_url(srv.base_url.as_str())
            .api_key(key.as_str())
            .rate_limit(None)
    };
    let (on, off) = rounds(&builder, &codes, dir.path()).await;
    figure(
        "archive: the same batch against the release server on this machine, archive on",
        on,
        off,
        "info",
    )
}

/// (d) with `delay` none: the same batch against the in-process test double: the archive's own
/// cost (an append per bought answer) at its most visible, for information. (b) with a delay:
/// every answer `delay` late, as over a network.
async fn batch_double(delay: Option<Duration>) -> Figure {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .expect("double");
    if let Some(d) = delay {
        srv.inject(carapi_test_double::Fault::delay(d).always());
    }
    let template = carapi_test_double::dados::bundled()
        .into_iter()
        .next()
        .expect("a bundled record");
    let records: Vec<_> = (0..(BATCH * ROUNDS) as u64)
        .map(|i| {
            let mut r = template.clone();
            r.codigo_car = CodigoCar::parse(code(ENTRIES + 1 + i)).expect("code");
            r
        })
        .collect();
    srv.server()
        .state()
        .replace_imoveis(&records)
        .await
        .expect("records");
    let conta = srv
        .conta()
        .saldo(Decimal::from(100_000))
        .create()
        .await
        .expect("account");
    let codes: Vec<String> = records.iter().map(|r| r.codigo_car.to_string()).collect();
    let dir = tempfile::tempdir().expect("dir");
    let builder = || srv.client_builder(&conta).rate_limit(None);
    let (on, off) = rounds(&builder, &codes, dir.path()).await;
    match delay {
        None => figure(
            "archive: the same batch against the in-process test double, no delay, archive on",
            on,
            off,
            "info",
        ),
        Some(_) => figure(
            "archive: 1,000 bought lookups (all misses), every answer 20 ms late (a network), archive on",
            on,
            off,
            "<= 1.05",
        ),
    }
}

/// [`ROUNDS`] rounds of [`BATCH`] distinct codes each (every archive lookup a miss), 4 at a
/// time, alternating archive off and on (a new archive file per round); the best seconds of
/// each side, `(on, off)`.
async fn rounds(
    builder: &dyn Fn() -> carapi_sdk::ClientBuilder,
    codes: &[String],
    dir: &std::path::Path,
) -> (f64, f64) {
    let (mut off, mut on) = (f64::MAX, f64::MAX);
    for (round, codes) in codes.chunks(BATCH).take(ROUNDS).enumerate() {
        let mut b = builder();
        let archived = round % 2 == 1;
        if archived {
            let a = Archive::open(dir.join(format!("acervo{round}.sqlite3"))).expect("archive");
            b = b.archive(
                a,
                ArchivePolicy::new(
                    "bench",
                    LegalBasis::LegitimateInterest,
                    Freshness::MaxAge(Duration::from_secs(3600)),
                ),
            );
        }
        let client = b.build().expect("client");
        let t = Instant::now();
        let ok = futures::stream::iter(codes)
            .map(|c| {
                let client = &client;
                async move { client.car(c).await.is_ok() }
            })
            .buffered(4)
            .filter(|ok| std::future::ready(*ok))
            .count()
            .await;
        let s = t.elapsed().as_secs_f64();
        assert_eq!(ok, BATCH, "every lookup answered");
        if archived {
            on = on.min(s);
        } else {
            off = off.min(s);
        }
    }
    (on, off)
}

/// The row of a batch measured on and off.
fn figure(name: &'static str, on: f64, off: f64, target: &'static str) -> Figure {
    let ratio = on / off;
    Figure {
        name,
        measured: format!("{on:.2} s ({:.0}/s)", BATCH as f64 / on),
        reference: format!("off {off:.2} s ({:.0}/s)", BATCH as f64 / off),
        ratio,
        target,
        ok: target == "info" || ratio <= 1.05,
    }
}
