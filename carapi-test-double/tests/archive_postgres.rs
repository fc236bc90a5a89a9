//! The SDK's team archive in PostgreSQL (its feature `archive-postgres`) against this double over
//! real sockets: two processes looking up one code at once debit once; 50 concurrent lookups of
//! one code (on two archive handles, as two processes would) debit once; a buyer that gets an
//! error, or is cancelled, leaves the purchase to the waiter, and only one 200 is paid; the chain
//! verifies, and a changed byte, a deleted newest entry and a recomputed chain are detected
//! against a kept head.
//!
//! Each test works in a schema of its own, created in `DATABASE_URL`'s database and dropped at
//! the end; without `DATABASE_URL` each test says so and returns.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{dropped_lookups_pay_once, many_records, record_with_owner};

use carapi_sdk::archive::{Archive, ArchiveOptions, ArchivePolicy, Freshness, Head, LegalBasis};
use carapi_sdk::{Answer, Client, Origin, Precos, dec};
use carapi_test_double::{ContaCriada, Fault, TestServer};
use sqlx::postgres::{PgPool, PgPoolOptions};

/// The route of the complete lookup, as the double's faults name it.
const COMPLETO: &str = "/v1/car/{codigoCar}/completo";

/// A guard against a hang (a claim never released): generous, never a speed assertion.
const HANG: Duration = Duration::from_secs(120);

fn policy(freshness: Freshness) -> ArchivePolicy {
    ArchivePolicy::new(
        "monitoramento de fornecedores",
        LegalBasis::Contract,
        freshness,
    )
}

fn fresh() -> ArchivePolicy {
    policy(Freshness::MaxAge(Duration::from_secs(3600)))
}

/// A schema of the test's own in `DATABASE_URL`'s database, and the URL that works in it.
struct Schema {
    admin: PgPool,
    name: String,
    url: String,
}

impl Schema {
    async fn create(test: &str) -> Option<Schema> {
        let Ok(base) = std::env::var("DATABASE_URL") else {
            eprintln!(
                "{test}: DATABASE_URL unset (e.g. postgres://postgres@127.0.0.1:5432/test): skipped"
            );
            return None;
        };
        let admin = PgPoolOptions::new()
            .max_connections(2)
            .connect(&base)
            .await
            .expect("DATABASE_URL reachable");
        let name = format!("acervo_{}", uuid::Uuid::new_v4().simple());
        sqlx::query(&format!("CREATE SCHEMA {name}"))
            .execute(&admin)
            .await
            .expect("create schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
        Some(Schema { admin, name, url })
    }

    /// A new handle on the schema's archive (as another process would open it).
    fn archive(&self) -> Archive {
        self.archive_with(ArchiveOptions::default())
    }

    /// [`Schema::archive`] with `options` (the purge key in the temporary directory).
    fn archive_with(&self, options: ArchiveOptions) -> Archive {
        let key = std::env::temp_dir().join(format!("{}-expurgos.chave", self.name));
        Archive::connect_with(&self.url, &options.purge_key_file(key))
            .expect("archive in PostgreSQL")
    }

    /// Runs `sql` (one or more statements) in the schema, by hand: the tampering.
    async fn execute(&self, sql: &str) {
        sqlx::raw_sql(&format!("SET search_path TO {}; {sql}", self.name))
            .execute(&self.admin)
            .await
            .expect(sql);
    }

    async fn drop(self) {
        let _ = sqlx::query(&format!("DROP SCHEMA {} CASCADE", self.name))
            .execute(&self.admin)
            .await;
    }
}

async fn saldo(srv: &TestServer, conta: &ContaCriada) -> carapi_sdk::Decimal {
    srv.conta_state(conta).await.expect("state").saldo
}

fn client(srv: &TestServer, conta: &ContaCriada, archive: Archive) -> Client {
    srv.client_builder(conta)
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(archive, fresh())
        .build()
        .expect("client")
}

/// Run by [`two_processes_looking_up_one_code_at_once_debit_once`] as a child process: one
/// complete lookup through the archive at `ACERVO_TESTE_URL`, with the key and server of
/// `CARAPI_API_KEY` / `CARAPI_BASE_URL`; prints `ORIGEM=api` or `ORIGEM=acervo`.
#[tokio::test]
#[ignore = "a child process of two_processes_looking_up_one_code_at_once_debit_once, run by it"]
async fn child_process_lookup() {
    let url = std::env::var("ACERVO_TESTE_URL").expect("run by two_processes_...");
    let codigo = std::env::var("ACERVO_TESTE_CODIGO").expect("run by two_processes_...");
    let c = Client::builder()
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(Archive::connect(&url).expect("archive"), fresh())
        .build()
        .expect("client from CARAPI_BASE_URL / CARAPI_API_KEY");
    let a = c.car_completo(&codigo).await.expect("lookup");
    println!("ORIGEM={}", a.origin.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_looking_up_one_code_at_once_debit_once() {
    let Some(s) = Schema::create("two_processes").await else {
        return;
    };
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let (codigo, _) = record_with_owner();
    // The first purchase takes a while: the other process meets the claim and waits for it.
    srv.inject(Fault::delay(Duration::from_millis(1500)).on(COMPLETO));
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "child_process_lookup",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                ])
                .env("CARAPI_BASE_URL", srv.base_url())
                .env("CARAPI_API_KEY", &conta.api_key)
                .env("ACERVO_TESTE_URL", &s.url)
                .env("ACERVO_TESTE_CODIGO", &codigo)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("child process")
        })
        .collect();
    let mut origins = Vec::new();
    for child in children {
        let out = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let origin = stdout
            .lines()
            .find_map(|l| l.strip_prefix("ORIGEM="))
            .unwrap_or_else(|| panic!("no ORIGEM line in {stdout}"))
            .to_owned();
        origins.push(origin);
    }
    origins.sort();
    assert_eq!(
        origins,
        ["acervo", "api"],
        "one bought, the other read the archive"
    );
    assert_eq!(
        saldo(&srv, &conta).await,
        dec!(100) - Precos::ATUAIS.car_completo,
        "debited once"
    );
    let entries = s.archive().entries().unwrap();
    assert_eq!(entries.len(), 1);
    s.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_lookups_of_one_code_debit_once() {
    let Some(s) = Schema::create("fifty_concurrent").await else {
        return;
    };
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let (codigo, _) = record_with_owner();
    srv.inject(Fault::delay(Duration::from_millis(500)).on(COMPLETO));
    // Two handles on the archive, two clients: in-process single flight within each, the
    // claim across them.
    let clients = [
        client(&srv, &conta, s.archive()),
        client(&srv, &conta, s.archive()),
    ];
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let c = clients[i % 2].clone();
            let codigo = codigo.clone();
            tokio::spawn(async move { c.car_completo(&codigo).await })
        })
        .collect();
    let mut bought = 0;
    for t in tasks {
        if t.await.unwrap().unwrap().origin == Origin::Api {
            bought += 1;
        }
    }
    assert_eq!(bought, 1, "one buys, 49 read the archive");
    assert_eq!(
        saldo(&srv, &conta).await,
        dec!(100) - Precos::ATUAIS.car_completo
    );
    assert_eq!(s.archive().entries().unwrap().len(), 1);
    s.drop().await;
}

/// Two accounts of a team on one archive: `a` (no balance: its lookup ends in 402 after a
/// delay) starts first and claims the key; `b` waits for it.
async fn two_contas(s: &Schema) -> (TestServer, ContaCriada, ContaCriada, Client, Client) {
    let srv = TestServer::start().await.unwrap();
    let a = srv.conta().saldo(dec!(0)).create().await.unwrap();
    let b = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let ca = client(&srv, &a, s.archive());
    let cb = client(&srv, &b, s.archive());
    (srv, a, b, ca, cb)
}

/// The complete lookup of `codigo` by `ca` (the buyer), then 300 ms later by `cb` (the
/// waiter), each on a task of its own.
async fn buyer_then_waiter(ca: Client, cb: Client, codigo: &str) -> (Lookup, Lookup) {
    let spawn =
        |c: Client, codigo: String| tokio::spawn(async move { c.car_completo(&codigo).await });
    let first = spawn(ca, codigo.to_owned());
    tokio::time::sleep(Duration::from_millis(300)).await;
    (first, spawn(cb, codigo.to_owned()))
}

/// A lookup's task.
type Lookup = tokio::task::JoinHandle<
    carapi_sdk::Result<Answer<carapi_sdk::CarResponse<carapi_sdk::CarDadosCompletos>>>,
>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_buyer_that_gets_an_error_leaves_the_purchase_to_the_waiter() {
    let Some(s) = Schema::create("buyer_error").await else {
        return;
    };
    let (srv, a, b, ca, cb) = two_contas(&s).await;
    let (codigo, _) = record_with_owner();
    srv.inject(
        Fault::delay(Duration::from_millis(1500))
            .on(COMPLETO)
            .of_conta(a.conta_id),
    );
    let (first, second) = buyer_then_waiter(ca, cb, &codigo).await;
    let first = tokio::time::timeout(HANG, first).await.unwrap().unwrap();
    let second = tokio::time::timeout(HANG, second).await.unwrap().unwrap();
    match &first {
        Err(e) => {
            assert_eq!(e.status(), Some(402), "{e}");
            eprintln!("the buyer got its 402 and released the claim; the waiter bought");
        }
        // Only when the waiter claimed first (the buyer's start was slow).
        Ok(got) => assert_eq!(got.origin, Origin::Archive),
    }
    assert_eq!(second.unwrap().origin, Origin::Api, "the waiter bought");
    assert_eq!(saldo(&srv, &a).await, dec!(0), "no debit on the error");
    assert_eq!(
        saldo(&srv, &b).await,
        dec!(100) - Precos::ATUAIS.car_completo,
        "one 200 paid"
    );
    assert_eq!(s.archive().entries().unwrap().len(), 1);
    s.drop().await;
}

/// A buyer whose caller went away after its request left keeps the key until its purchase
/// ends (it may be charged: its answer is kept), then the waiter reads the archive or buys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_buyer_ends_its_purchase_then_the_waiter_buys() {
    let Some(s) = Schema::create("buyer_dropped").await else {
        return;
    };
    let (srv, a, b, ca, cb) = two_contas(&s).await;
    let (codigo, _) = record_with_owner();
    // The buyer's request takes 2 s and ends in a 402 (nothing to pay).
    srv.inject(
        Fault::delay(Duration::from_secs(2))
            .on(COMPLETO)
            .of_conta(a.conta_id),
    );
    let (first, second) = buyer_then_waiter(ca.clone(), cb, &codigo).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    let second = tokio::time::timeout(HANG, second)
        .await
        .expect("the dropped buyer's claim was released once its purchase ended")
        .unwrap()
        .unwrap();
    assert_eq!(ca.close().await, 0);
    assert_eq!(second.origin, Origin::Api, "the waiter bought");
    assert_eq!(saldo(&srv, &a).await, dec!(0));
    assert_eq!(
        saldo(&srv, &b).await,
        dec!(100) - Precos::ATUAIS.car_completo,
        "one 200 paid"
    );
    assert_eq!(s.archive().entries().unwrap().len(), 1);
    s.drop().await;
}

/// Three entries bought, the head kept: the chain verifies; one changed byte, the newest entry
/// deleted and a chain recomputed from scratch each fail against the kept head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chain_verifies_and_tampering_is_detected_against_the_kept_head() {
    let Some(s) = Schema::create("tampering").await else {
        return;
    };
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let archive = s.archive();
    let c = srv
        .client_builder(&conta)
        .rate_limit(None)
        .archive(archive.clone(), policy(Freshness::Never))
        .build()
        .unwrap();
    let (codigo, doc) = record_with_owner();
    c.car(&codigo).await.unwrap();
    c.car_completo(&codigo).await.unwrap();
    c.proprietario(doc.as_str()).await.unwrap();
    let kept: Head = archive.head().unwrap().expect("head");
    assert_eq!(kept.seq, 3);
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(v.is_ok(), "{:?}", v.failures);
    assert_eq!(v.entries, 3);
    assert_eq!(
        archive
            .subject(&doc)
            .unwrap()
            .into_iter()
            .map(|e| e.consulta.name())
            .collect::<Vec<_>>(),
        ["car_completo", "proprietario"]
    );

    // One byte of a body changed (a digit of the complete answer), then restored.
    s.execute(
        "UPDATE archive_contents SET body = overlay(body placing \
         (CASE WHEN get_byte(body, 1) = 49 THEN '\\x32' ELSE '\\x31' END)::bytea from 2 for 1) \
         WHERE seq = 2",
    )
    .await;
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(
        v.failures
            .iter()
            .any(|f| f.contains("entrada 2: conteúdo alterado")),
        "{:?}",
        v.failures
    );

    // The newest entry deleted: what is left is consistent, the kept head is not in it.
    s.execute(
        "DELETE FROM archive_contents WHERE seq = 3; DELETE FROM archive_documents WHERE seq = 3; \
         DELETE FROM archive_entries WHERE seq = 3",
    )
    .await;
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(
        v.failures.iter().any(|f| f.contains("acervo truncado")),
        "{:?}",
        v.failures
    );

    // A chain recomputed from scratch: the tables emptied and three entries of their own
    // bought in their place. It verifies alone; not against the kept head.
    s.execute(
        "DELETE FROM archive_contents; DELETE FROM archive_documents; DELETE FROM archive_entries",
    )
    .await;
    c.car(&codigo).await.unwrap();
    c.car(&codigo).await.unwrap();
    c.car(&codigo).await.unwrap();
    assert!(archive.verify(None).unwrap().is_ok());
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(
        v.failures.iter().any(|f| f.contains("cadeia refeita")),
        "{:?}",
        v.failures
    );

    // Purging the owner's document keeps a verifiable chain.
    c.proprietario(doc.as_str()).await.unwrap();
    let kept = archive.head().unwrap().unwrap();
    assert_eq!(archive.purge_documento(&doc).unwrap(), 1);
    assert!(archive.subject(&doc).unwrap().is_empty());
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(v.is_ok(), "{:?}", v.failures);
    assert_eq!(v.purged, 1);
    s.drop().await;
}

/// Key rotation on the team archive: linked fingerprints list the same entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_fingerprints_list_the_same_entries() {
    let Some(s) = Schema::create("linked").await else {
        return;
    };
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let archive = s.archive();
    client(&srv, &conta, archive.clone())
        .car(record_with_owner().0)
        .await
        .unwrap();
    let old = carapi_sdk::archive::fingerprint(&conta.api_key);
    let new = carapi_sdk::archive::fingerprint("car_nova");
    assert!(archive.conta_entries(&new).unwrap().is_empty());
    archive.link_contas(&old, &new).unwrap();
    assert_eq!(archive.conta_entries(&new).unwrap().len(), 1);
    assert_eq!(
        archive.conta_entries(&new).unwrap(),
        archive.conta_entries(&old).unwrap()
    );
    s.drop().await;
}

/// 3,000 keys with deadlines from 1 ms to past the answer, 100 at a time, on the team archive:
/// every key the server charged is archived, and none is charged twice when all are looked up
/// again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_lookups_never_pay_twice_nor_lose_a_paid_answer_on_postgres() {
    let Some(s) = Schema::create("sweep").await else {
        return;
    };
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 3000).await;
    let conta = srv.conta().saldo(dec!(10000)).create().await.unwrap();
    let archive = s.archive();
    let c = srv
        .client_builder(&conta)
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(archive.clone(), fresh())
        .build()
        .unwrap();
    dropped_lookups_pay_once(&srv, &c, &archive, &codes).await;
    s.drop().await;
}

/// 500 distinct keys at once on a team archive of 4 pooled connections that wait at most 2 s
/// for one, at a client rate of 100 per second (5 s of lookups): no purchase holds a pooled
/// connection while it waits for the rate limiter, so none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_keys_at_once_on_a_small_pool_all_succeed() {
    let Some(s) = Schema::create("burst").await else {
        return;
    };
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 500).await;
    let conta = srv.conta().saldo(dec!(1000)).create().await.unwrap();
    let archive = s.archive_with(
        ArchiveOptions::default()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(2)),
    );
    let c = srv
        .client_builder(&conta)
        .rate_limit(std::num::NonZeroU32::new(100))
        .precos(Precos::ATUAIS)
        .archive(archive.clone(), fresh())
        .build()
        .unwrap();
    let all = futures::future::join_all(codes.iter().map(|k| c.car(k))).await;
    let errors: Vec<String> = all
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert!(
        errors.is_empty(),
        "{} failed: {:?}",
        errors.len(),
        errors.first()
    );
    assert_eq!(archive.entries().unwrap().len(), 500);
    s.drop().await;
}

/// A team archive a newer version created (its schema past this one's) is refused at connect,
/// not written by a writer that does not know its tables.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_is_refused_at_connect() {
    let Some(s) = Schema::create("newer_schema").await else {
        return;
    };
    drop(s.archive());
    s.execute("UPDATE archive_meta SET value = '99' WHERE name = 'schema'")
        .await;
    let url = s.url.clone();
    let e = tokio::task::spawn_blocking(move || Archive::connect(&url))
        .await
        .unwrap()
        .expect_err("refused");
    assert!(
        carapi_sdk::error_chain(&e).contains("versão mais nova"),
        "{}",
        carapi_sdk::error_chain(&e)
    );
    s.drop().await;
}

/// A fresh client (its prices unknown: read alongside its first purchases) with 4 requests in
/// flight at most, on a team archive of 2 pooled connections that has recorded a purge: 60
/// complete lookups at once all end. The purchases holding the archive's connections wait for
/// the price read and check the purges, and neither may wait for a connection or a place they
/// hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purchases_never_wait_for_what_they_hold() {
    let Some(s) = Schema::create("hold_wait").await else {
        return;
    };
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 60).await;
    let conta = srv.conta().saldo(dec!(1000)).create().await.unwrap();
    srv.inject(Fault::delay(Duration::from_millis(50)).always());
    let archive = s.archive_with(
        ArchiveOptions::default()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(60)),
    );
    let purged = carapi_sdk::CpfCnpj::parse("52998224725").unwrap();
    let a = archive.clone();
    tokio::task::spawn_blocking(move || a.purge_documento(&purged).unwrap())
        .await
        .unwrap();
    let c = srv
        .client_builder(&conta)
        .rate_limit(None)
        .max_in_flight(std::num::NonZeroUsize::new(4).unwrap())
        .archive(archive.clone(), fresh())
        .build()
        .unwrap();
    let all = tokio::time::timeout(
        Duration::from_secs(30),
        futures::future::join_all(codes.iter().map(|k| c.car_completo(k))),
    )
    .await
    .expect("every lookup ends (no purchase waits for what it holds)");
    assert!(all.iter().all(Result::is_ok));
    assert_eq!(archive.entries().unwrap().len(), 60);
    s.drop().await;
}
