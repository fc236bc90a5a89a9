//! The SDK's SQLite archive inside a real service, against this double over real sockets: a
//! sweep of lookups dropped at every moment never pays a key twice nor loses a paid answer; two
//! handles on one file see each other's answers at once; two processes opening one new file at
//! once pay each key once; blocking programs that return from `main` right after a purchase
//! keep it; an altered entry is refused, not served, until an explicit new purchase; a purged
//! document is not bought again without the override; two processes with one key meet no 429.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{charged_per_key, dropped_lookups_pay_once, many_records, record_with_owner};

use carapi_sdk::archive::{
    Archive, ArchiveErrorKind, ArchivePolicy, Commit, Freshness, LegalBasis,
};
use carapi_sdk::{Client, EndpointConsulta, Error, Origin, Precos, dec};
use carapi_test_double::{ContaCriada, Fault, TestServer};
use futures::StreamExt;

fn fresh() -> ArchivePolicy {
    ArchivePolicy::new(
        "due diligence de fornecedores",
        LegalBasis::LegitimateInterest,
        Freshness::MaxAge(Duration::from_secs(3600)),
    )
}

fn client(srv: &TestServer, conta: &ContaCriada, archive: Archive) -> Client {
    srv.client_builder(conta)
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(archive, fresh())
        .build()
        .expect("client")
}

/// Runs this test binary's ignored test `name` as a child process with `env`.
fn child(name: &str, env: &[(&str, &str)]) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([name, "--exact", "--ignored", "--nocapture"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("child process")
}

/// Waits for a child off the runtime's threads; panics with its output when it failed.
async fn finished(c: std::process::Child) -> Output {
    let out = tokio::task::spawn_blocking(move || c.wait_with_output())
        .await
        .expect("join")
        .expect("child");
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// 3,000 keys looked up with deadlines from 1 ms to past the answer (20 ms late), 100 at a
/// time, then `close`: every key the server charged is in the archive; then every key again:
/// none is charged twice, all are in the archive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_lookups_never_pay_twice_nor_lose_a_paid_answer() {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 3000).await;
    let conta = srv.conta().saldo(dec!(10000)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::open(dir.path().join("acervo.sqlite3")).unwrap();
    let c = client(&srv, &conta, archive.clone());
    dropped_lookups_pay_once(&srv, &c, &archive, &codes).await;
}

/// The service's client on one handle, its audit endpoint on another: each lookup's entry is
/// readable through the other handle when the lookup returns (also one left behind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_on_one_file_see_each_others_answers_at_once() {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 300).await;
    let conta = srv.conta().saldo(dec!(1000)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acervo.sqlite3");
    let service = client(&srv, &conta, Archive::open(&path).unwrap());
    let audit = Archive::open(&path).unwrap();
    for (i, k) in codes.iter().enumerate() {
        let handle = if i % 2 == 0 {
            service.clone()
        } else {
            service.with_commit(Commit::Behind)
        };
        let a = handle.car(k).await.unwrap();
        assert_eq!(a.origin, Origin::Api);
        let seen = audit.latest_entry(EndpointConsulta::CarBasico, k).unwrap();
        assert!(
            seen.is_some(),
            "entry {i} not visible through the other handle"
        );
    }
    // A second client on the other handle buys nothing again.
    let other = client(&srv, &conta, audit.clone());
    for k in &codes[..50] {
        assert_eq!(other.car(k).await.unwrap().origin, Origin::Archive);
    }
    assert_eq!(charged_per_key(&service).await.len(), 300);
}

/// Run by [`two_processes_on_one_new_file_pay_each_key_once`]: opens the file at
/// `ACERVO_TESTE_ARQUIVO` and looks up the codes of `ACERVO_TESTE_CODIGOS`, 10 at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a child process of two_processes_on_one_new_file_pay_each_key_once, run by it"]
async fn child_lookups_on_one_file() {
    let path = std::env::var("ACERVO_TESTE_ARQUIVO").expect("run by its parent");
    let codes = std::env::var("ACERVO_TESTE_CODIGOS").expect("run by its parent");
    let c = Client::builder()
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(Archive::open(&path).expect("open"), fresh())
        .build()
        .expect("client from CARAPI_BASE_URL / CARAPI_API_KEY");
    let results = futures::stream::iter(codes.split(','))
        .map(|k| c.car(k))
        .buffer_unordered(10)
        .collect::<Vec<_>>()
        .await;
    let bought = results
        .iter()
        .filter(|r| r.as_ref().expect("lookup").origin == Origin::Api)
        .count();
    println!("COMPRADAS={bought}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_new_file_pay_each_key_once() {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 50).await;
    let conta = srv.conta().saldo(dec!(1000)).create().await.unwrap();
    srv.inject(Fault::delay(Duration::from_millis(30)).always());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("novo").join("acervo.sqlite3");
    let (base, path_s, joined) = (srv.base_url(), path.display().to_string(), codes.join(","));
    let env = [
        ("CARAPI_BASE_URL", base.as_str()),
        ("CARAPI_API_KEY", conta.api_key.as_str()),
        ("ACERVO_TESTE_ARQUIVO", path_s.as_str()),
        ("ACERVO_TESTE_CODIGOS", joined.as_str()),
    ];
    let children = [
        child("child_lookups_on_one_file", &env),
        child("child_lookups_on_one_file", &env),
    ];
    let mut bought = 0;
    for c in children {
        let out = finished(c).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        bought += stdout
            .lines()
            .find_map(|l| l.strip_prefix("COMPRADAS="))
            .and_then(|n| n.parse::<usize>().ok())
            .expect("a COMPRADAS line");
    }
    assert_eq!(bought, 50, "each key bought by one of the two");
    let c = srv.client(&conta).unwrap();
    let twice: Vec<_> = charged_per_key(&c)
        .await
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(twice.is_empty(), "paid twice: {twice:?}");
    let archive = Archive::open(&path).unwrap();
    assert_eq!(archive.entries().unwrap().len(), 50);
    assert!(archive.verify(None).unwrap().is_ok());
}

/// Run by [`blocking_programs_keep_what_they_bought_when_main_returns`]: a plain (no async)
/// program that looks one code up through a `blocking::Client` with an archive and returns.
#[test]
#[ignore = "a child process of blocking_programs_keep_what_they_bought_when_main_returns, run by it"]
fn child_blocking_program() {
    let path = std::env::var("ACERVO_TESTE_ARQUIVO").expect("run by its parent");
    let code = std::env::var("ACERVO_TESTE_CODIGOS").expect("run by its parent");
    let c = Client::builder()
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(Archive::open(&path).expect("open"), fresh())
        .build_blocking()
        .expect("client from CARAPI_BASE_URL / CARAPI_API_KEY");
    let a = c.car(&code).expect("lookup");
    println!("ORIGEM={}", a.origin.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_programs_keep_what_they_bought_when_main_returns() {
    let srv = TestServer::builder()
        .rate_limit(None)
        .start()
        .await
        .unwrap();
    let codes = many_records(&srv, 20).await;
    let conta = srv.conta().saldo(dec!(1000)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acervo.sqlite3").display().to_string();
    let base = srv.base_url();
    let run = |code: &str| {
        child(
            "child_blocking_program",
            &[
                ("CARAPI_BASE_URL", base.as_str()),
                ("CARAPI_API_KEY", conta.api_key.as_str()),
                ("ACERVO_TESTE_ARQUIVO", path.as_str()),
                ("ACERVO_TESTE_CODIGOS", code),
            ],
        )
    };
    for pass in ["api", "acervo"] {
        for code in &codes {
            let out = finished(run(code)).await;
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains(&format!("ORIGEM={pass}")), "{stdout}");
        }
    }
    assert_eq!(Archive::open(&path).unwrap().entries().unwrap().len(), 20);
    let charged = charged_per_key(&srv.client(&conta).unwrap()).await;
    assert_eq!(charged.len(), 20);
    assert!(charged.values().all(|n| *n == 1), "the rerun paid nothing");
}

/// Edits one byte of an archived answer in the file (as someone with the file could).
fn tamper(path: &Path, seq: u64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute(
        "UPDATE contents SET body = CAST(replace(CAST(body AS TEXT), 'a', 'b') AS BLOB) WHERE seq = ?1",
        [i64::try_from(seq).unwrap()],
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_altered_entry_is_refused_naming_it_and_nothing_is_bought() {
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("acervo.sqlite3");
    let c = client(&srv, &conta, Archive::open(&path).unwrap());
    let (codigo, _) = record_with_owner();
    let first = c.car_completo(&codigo).await.unwrap();
    assert_eq!(first.seq, Some(1));
    tamper(&path, 1);
    let e = c.car_completo(&codigo).await.unwrap_err();
    let Error::Archive(a) = &e else { panic!("{e}") };
    assert_eq!(a.kind(), ArchiveErrorKind::Tampered);
    assert_eq!(a.seq(), Some(1));
    assert!(e.to_string().contains("entrada 1"), "{e}");
    assert!(!e.is_retryable() && !e.may_have_charged());
    assert_eq!(
        charged_per_key(&c).await.get(&codigo),
        Some(&1),
        "nothing bought"
    );
    // The way out: an explicit new purchase, kept as a new entry, then served.
    let again = c
        .with_freshness(Freshness::Never)
        .car_completo(&codigo)
        .await
        .unwrap();
    assert_eq!((again.origin, again.seq), (Origin::Api, Some(2)));
    let served = c.car_completo(&codigo).await.unwrap();
    assert_eq!((served.origin, served.seq), (Origin::Archive, Some(2)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_document_is_not_bought_again_without_the_override() {
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::open(dir.path().join("acervo.sqlite3")).unwrap();
    let c = client(&srv, &conta, archive.clone());
    let (codigo, doc) = record_with_owner();
    c.proprietario(doc.as_str()).await.unwrap();
    assert!(archive.purges_of(&doc).unwrap().is_empty());
    assert_eq!(archive.purge_documento(&doc).unwrap(), 1);
    let purged = archive.purges_of(&doc).unwrap();
    assert_eq!(purged.len(), 1, "titular lists the purge");
    let before = charged_per_key(&c).await;
    let e = c.proprietario(doc.as_str()).await.unwrap_err();
    let Error::Archive(a) = &e else { panic!("{e}") };
    assert_eq!(a.kind(), ArchiveErrorKind::Purged);
    assert_eq!(a.purged_at(), Some(purged[0]));
    assert!(
        !e.to_string().contains(doc.as_str()),
        "no document in the text: {e}"
    );
    assert_eq!(charged_per_key(&c).await, before, "nothing sent");
    // A complete answer that names the purged owner is bought, kept, and says so.
    let completo = c.car_completo(&codigo).await.unwrap();
    let w = completo
        .warning
        .as_deref()
        .expect("a warning naming the purge");
    assert!(w.contains("expurg"), "{w}");
    assert!(completo.seq.is_some(), "kept");
    // The override: a new processing, decided by the caller.
    let allowed = c
        .with_purged_allowed()
        .proprietario(doc.as_str())
        .await
        .unwrap();
    assert_eq!(allowed.origin, Origin::Api);
}

/// Run by [`two_processes_with_one_key_meet_no_429`]: 60 free calls, 4 at a time, at the
/// client's default limit; prints the errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a child process of two_processes_with_one_key_meet_no_429, run by it"]
async fn child_sixty_calls() {
    let c = Client::from_env().expect("client from CARAPI_BASE_URL / CARAPI_API_KEY");
    let errors: Vec<String> = futures::stream::iter(0..60)
        .map(|_| c.saldo())
        .buffer_unordered(4)
        .filter_map(|r| std::future::ready(r.err().map(|e| e.to_string())))
        .collect()
        .await;
    println!("ERROS={}", errors.len());
    for e in errors {
        println!("ERRO {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_with_one_key_meet_no_429() {
    let srv = TestServer::builder()
        .rate_limit(Some(10))
        .start()
        .await
        .unwrap();
    let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
    let base = srv.base_url();
    let env = [
        ("CARAPI_BASE_URL", base.as_str()),
        ("CARAPI_API_KEY", conta.api_key.as_str()),
    ];
    let children = [
        child("child_sixty_calls", &env),
        child("child_sixty_calls", &env),
    ];
    for c in children {
        let out = finished(c).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("ERROS=0"), "{stdout}");
    }
}
