//! The SDK's archive of paid answers (its feature `archive`) against this double over real sockets:
//! reuse within the policy, buying again past it, one purchase for 50 concurrent lookups,
//! tampering detected against a kept head, purge keeping the chain, subject listing, a full
//! archive that still answers (with a warning, or a WARN event for a plain lookup), a missing
//! purpose refused before any request.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod common;

use std::time::Duration;

use common::record_with_owner;

use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness, LegalBasis};
use carapi_sdk::{Client, Error, HistoricoParams, Origin, Precos, dec};
use carapi_test_double::{ContaCriada, TestServer, dados};

fn policy(freshness: Freshness) -> ArchivePolicy {
    ArchivePolicy::new(
        "análise de crédito rural",
        LegalBasis::CreditProtection,
        freshness,
    )
}

async fn setup(
    freshness: Freshness,
) -> (TestServer, ContaCriada, Client, Archive, tempfile::TempDir) {
    let srv = TestServer::start().await.expect("double");
    let conta = srv.conta().saldo(dec!(500)).create().await.expect("conta");
    let dir = tempfile::tempdir().expect("tempdir");
    let archive = Archive::open(dir.path().join("acervo.sqlite3")).expect("archive");
    let client = srv
        .client_builder(&conta)
        .rate_limit(None)
        .precos(Precos::ATUAIS)
        .archive(archive.clone(), policy(freshness))
        .build()
        .expect("client");
    (srv, conta, client, archive, dir)
}

async fn saldo(srv: &TestServer, conta: &ContaCriada) -> carapi_sdk::Decimal {
    srv.conta_state(conta).await.expect("state").saldo
}

async fn charged_consultas(c: &Client) -> usize {
    c.historico(&HistoricoParams::default())
        .await
        .expect("historico")
        .itens
        .len()
}

#[tokio::test]
async fn second_lookup_within_policy_sends_no_request_and_saldo_is_unchanged() {
    let (srv, conta, c, archive, _dir) = setup(Freshness::MaxAge(Duration::from_secs(3600))).await;
    let (codigo, _) = record_with_owner();
    let first = c.car(&codigo).await.unwrap();
    assert_eq!(first.origin, Origin::Api);
    assert_eq!(first.seq, Some(1));
    let after_first = saldo(&srv, &conta).await;
    assert_eq!(after_first, dec!(500) - Precos::ATUAIS.car_basico);
    let gasto = c.gasto();

    let second = c.car(&codigo).await.unwrap();
    assert_eq!(second.origin, Origin::Archive, "answered from the archive");
    assert_eq!(second.bought_at, first.bought_at, "says when it was bought");
    assert_eq!(second.value, first.value, "the same answer");
    // The plain method goes through the archive too.
    let plain = c.car(&codigo).await.unwrap();
    assert_eq!(plain.value, first.value);
    assert_eq!(plain.origin, Origin::Archive);
    assert_eq!(saldo(&srv, &conta).await, after_first, "no charge");
    assert_eq!(c.gasto(), gasto, "gasto() unchanged by archived answers");
    assert_eq!(
        charged_consultas(&c).await,
        1,
        "one request reached the server"
    );
    let entries = archive.entries().unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(e.consulta.name(), "car");
    assert_eq!(e.chave.as_deref(), Some(codigo.as_str()));
    assert_eq!(e.preco, Some(Precos::ATUAIS.car_basico));
    assert_eq!(e.legal_basis, "protecao-credito");
    assert_eq!(e.purpose, "análise de crédito rural");
    assert!(e.data_consulta.is_some());
    assert_eq!(e.conta.len(), 16);
    assert!(
        !conta.api_key.contains(&e.conta),
        "a fingerprint, not the key"
    );
    let body = archive.body(1).unwrap().unwrap();
    assert_eq!(
        serde_json::from_slice::<carapi_sdk::CarResponse<carapi_sdk::CarDadosBasicos>>(&body)
            .unwrap(),
        first.value,
        "the exact body bytes are kept"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(archive.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "readable by its owner only");
    }
}

#[tokio::test]
async fn past_the_policy_it_buys_again_and_never_reuse_always_buys() {
    let (srv, conta, c, archive, _dir) = setup(Freshness::MaxAge(Duration::from_millis(300))).await;
    let (codigo, _) = record_with_owner();
    assert_eq!(c.car(&codigo).await.unwrap().origin, Origin::Api);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        c.car(&codigo).await.unwrap().origin,
        Origin::Api,
        "stale: bought again"
    );
    assert_eq!(
        saldo(&srv, &conta).await,
        dec!(500) - Precos::ATUAIS.car_basico * dec!(2)
    );
    assert_eq!(archive.entries().unwrap().len(), 2);

    let never = srv
        .client_builder(&conta)
        .rate_limit(None)
        .archive(archive.clone(), policy(Freshness::Never))
        .build()
        .unwrap();
    assert_eq!(never.car(&codigo).await.unwrap().origin, Origin::Api);
    assert_eq!(archive.entries().unwrap().len(), 3);
}

#[tokio::test]
async fn fifty_concurrent_lookups_of_one_code_debit_once() {
    let (srv, conta, c, archive, _dir) = setup(Freshness::MaxAge(Duration::from_secs(3600))).await;
    let (codigo, _) = record_with_owner();
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let c = c.clone();
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
        dec!(500) - Precos::ATUAIS.car_completo
    );
    assert_eq!(archive.entries().unwrap().len(), 1);
}

#[tokio::test]
async fn sandbox_answers_are_not_archived() {
    let (_srv, _conta, c, archive, _dir) =
        setup(Freshness::MaxAge(Duration::from_secs(3600))).await;
    let a = c.car(carapi_sdk::sandbox::CAR_BASICO).await.unwrap();
    assert_eq!((a.origin, a.seq), (Origin::Api, None));
    assert!(archive.entries().unwrap().is_empty());
}

/// Three entries bought, the head kept: a changed byte, a deleted newest entry and a chain
/// rebuilt from scratch each fail verification against the kept head.
#[tokio::test]
async fn tampering_is_detected_against_the_kept_head() {
    let (_srv, _conta, c, archive, dir) = setup(Freshness::Never).await;
    let (codigo, doc) = record_with_owner();
    c.car(&codigo).await.unwrap();
    c.car_completo(&codigo).await.unwrap();
    c.proprietario(doc.as_str()).await.unwrap();
    let kept = archive.head().unwrap().expect("head");
    assert_eq!(kept.seq, 3);
    assert_eq!(
        kept.to_string()
            .parse::<carapi_sdk::archive::Head>()
            .unwrap(),
        kept
    );
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(v.is_ok(), "{:?}", v.failures);
    assert_eq!(v.entries, 3);

    // One byte of a body changed.
    let path = archive.path().to_owned();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let body: Vec<u8> = raw
        .query_row("SELECT body FROM contents WHERE seq = 2", [], |r| r.get(0))
        .unwrap();
    let mut changed = body.clone();
    let i = changed.iter().position(|b| b.is_ascii_digit()).unwrap();
    changed[i] = if changed[i] == b'1' { b'2' } else { b'1' };
    raw.execute("UPDATE contents SET body = ?1 WHERE seq = 2", [&changed])
        .unwrap();
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(!v.is_ok());
    assert!(
        v.failures
            .iter()
            .any(|f| f.contains("entrada 2: conteúdo alterado")),
        "{:?}",
        v.failures
    );
    raw.execute("UPDATE contents SET body = ?1 WHERE seq = 2", [&body])
        .unwrap();
    assert!(archive.verify(Some(&kept)).unwrap().is_ok(), "restored");

    // A record field changed (the price).
    raw.execute("UPDATE entries SET preco = '0.01' WHERE seq = 1", [])
        .unwrap();
    let v = archive.verify(None).unwrap();
    assert!(
        v.failures
            .iter()
            .any(|f| f.contains("entrada 1: registro alterado")),
        "{:?}",
        v.failures
    );
    raw.execute(
        "UPDATE entries SET preco = ?1 WHERE seq = 1",
        [Precos::ATUAIS.car_basico.to_string()],
    )
    .unwrap();
    assert!(archive.verify(Some(&kept)).unwrap().is_ok(), "restored");

    // The newest entry deleted: the chain left is consistent, the kept head is not in it.
    raw.execute("DELETE FROM contents WHERE seq = 3", [])
        .unwrap();
    raw.execute("DELETE FROM documents WHERE seq = 3", [])
        .unwrap();
    raw.execute("DELETE FROM entries WHERE seq = 3", [])
        .unwrap();
    assert!(
        archive.verify(None).unwrap().is_ok(),
        "consistent without a kept head"
    );
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(
        v.failures.iter().any(|f| f.contains("acervo truncado")),
        "{:?}",
        v.failures
    );
    drop(raw);

    // A chain recomputed from scratch: another archive with three valid entries of its own
    // put in place of the first. It verifies alone; not against the kept head.
    let forged_path = dir.path().join("forjado.sqlite3");
    let forged = Archive::open(&forged_path).unwrap();
    let (srv2, conta2) = {
        let srv = TestServer::start().await.unwrap();
        let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
        (srv, conta)
    };
    let c2 = srv2
        .client_builder(&conta2)
        .rate_limit(None)
        .archive(forged.clone(), policy(Freshness::Never))
        .build()
        .unwrap();
    c2.car(&codigo).await.unwrap();
    c2.car(&codigo).await.unwrap();
    c2.car(&codigo).await.unwrap();
    assert!(forged.verify(None).unwrap().is_ok());
    let v = forged.verify(Some(&kept)).unwrap();
    assert!(
        v.failures.iter().any(|f| f.contains("cadeia refeita")),
        "{:?}",
        v.failures
    );
}

/// The owner's CPF is in the complete answer, the owner lookup and the receipt PDF: `subject`
/// lists the three; purging it removes their contents, keeps their records and the chain.
#[tokio::test]
async fn subject_lists_every_entry_and_purge_keeps_a_verifiable_chain() {
    let (_srv, _conta, c, archive, _dir) = setup(Freshness::Never).await;
    let (codigo, doc) = record_with_owner();
    c.car(&codigo).await.unwrap();
    c.car_completo(&codigo).await.unwrap();
    c.proprietario(doc.as_str()).await.unwrap();
    c.recibo(&codigo).await.unwrap();
    let kept = archive.head().unwrap().unwrap();
    let held: Vec<String> = archive
        .subject(&doc)
        .unwrap()
        .into_iter()
        .map(|e| e.consulta.name().to_owned())
        .collect();
    assert_eq!(held, ["car_completo", "proprietario", "recibo"]);

    let mut csv = Vec::new();
    archive.export_csv(&mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.contains("protecao-credito"));

    assert_eq!(archive.purge_documento(&doc).unwrap(), 3);
    assert!(
        archive.subject(&doc).unwrap().is_empty(),
        "nothing held about the CPF"
    );
    let entries = archive.entries().unwrap();
    assert_eq!(entries.len(), 4, "the charge records stay");
    for e in &entries[1..] {
        assert!(e.purged_at.is_some() && e.chave.is_none());
        assert!(e.preco.is_some());
        assert!(archive.body(e.seq).unwrap().is_none());
    }
    assert!(
        archive.body(1).unwrap().is_some(),
        "the basic answer holds no CPF"
    );
    let formatted = doc.formatted();
    for file in [
        archive.path().to_owned(),
        archive.path().with_extension("sqlite3-wal"),
    ] {
        let raw = std::fs::read(&file).unwrap_or_default();
        for needle in [formatted.as_bytes(), doc.as_str().as_bytes()] {
            assert!(
                !raw.windows(needle.len()).any(|w| w == needle),
                "the CPF is gone from {}",
                file.display()
            );
        }
    }
    let v = archive.verify(Some(&kept)).unwrap();
    assert!(v.is_ok(), "{:?}", v.failures);
    assert_eq!(v.purged, 3);
    // A purged answer is bought again, not served.
    let a = c.car_completo(&codigo).await.unwrap();
    assert_eq!(a.origin, Origin::Api);
}

/// A client of a new account whose archive is capped at the file's own size (its empty pages
/// take a few answers, then it is full), its archive, and the folder that holds it.
async fn full_archive(
    srv: &TestServer,
    freshness: Freshness,
) -> (Client, Archive, tempfile::TempDir) {
    let conta = srv.conta().saldo(dec!(500)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::open(dir.path().join("acervo.sqlite3"))
        .unwrap()
        .with_max_size(1)
        .unwrap();
    let c = srv
        .client_builder(&conta)
        .rate_limit(None)
        .archive(archive.clone(), policy(freshness))
        .build()
        .unwrap();
    (c, archive, dir)
}

#[tokio::test]
async fn an_answer_that_cannot_be_archived_still_reaches_the_user_with_a_warning() {
    let srv = TestServer::start().await.unwrap();
    let (c, archive, _dir) = full_archive(&srv, Freshness::MaxAge(Duration::from_secs(3600))).await;
    let (codigo, _) = record_with_owner();
    let a = c.recibo(&codigo).await.unwrap();
    assert!(a.value.bytes.starts_with(b"%PDF-"), "the user gets the PDF");
    assert_eq!(a.origin, Origin::Api);
    assert_eq!(a.seq, None);
    let w = a.warning.expect("a warning says it was not archived");
    assert!(w.contains("acervo"), "{w}");
    assert!(archive.entries().unwrap().is_empty());
}

/// The messages of the WARN events of target `carapi_sdk::archive`, from every thread (the
/// archive's committer runs on tokio's blocking pool), with their `operation`.
fn archive_warnings() -> &'static std::sync::Mutex<Vec<String>> {
    use tracing_subscriber::layer::SubscriberExt;
    static SEEN: std::sync::OnceLock<&'static std::sync::Mutex<Vec<String>>> =
        std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let seen: &'static std::sync::Mutex<Vec<String>> = Box::leak(Box::default());
        let subscriber = tracing_subscriber::registry().with(Warnings(seen));
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
        seen
    })
}

struct Warnings(&'static std::sync::Mutex<Vec<String>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Text(String);
        impl tracing::field::Visit for Text {
            fn record_debug(&mut self, field: &tracing::field::Field, v: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={v:?} ", field.name()));
            }
            fn record_str(&mut self, field: &tracing::field::Field, v: &str) {
                self.0.push_str(&format!("{}={v} ", field.name()));
            }
        }
        let m = event.metadata();
        if *m.level() == tracing::Level::WARN && m.target() == "carapi_sdk::archive" {
            let mut t = Text(String::new());
            event.record(&mut t);
            self.0.lock().unwrap().push(t.0);
        }
    }
}

/// A plain lookup leaves its append to the archive's committer and returns: on an archive
/// that fills up, every lookup still answers, and each answer not archived is a WARN event,
/// never silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lookups_on_a_full_archive_answer_and_warn() {
    let warnings = archive_warnings();
    let srv = TestServer::start().await.unwrap();
    let (c, archive, _dir) = full_archive(&srv, Freshness::Never).await;
    let codigos: Vec<String> = dados::bundled()
        .into_iter()
        .filter(|i| !i.proprietarios.is_empty())
        .map(|i| i.codigo_car.to_string())
        .take(12)
        .collect();
    for codigo in &codigos {
        assert!(
            c.car_completo(codigo).await.unwrap().success,
            "the user gets the answer"
        );
    }
    let archived = archive.entries().unwrap().len();
    assert!(
        archived < codigos.len(),
        "the archive filled up: {archived}"
    );
    let missing = codigos.len() - archived;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let warned = || {
        warnings
            .lock()
            .unwrap()
            .iter()
            .filter(|w| {
                w.contains("resposta paga não arquivada") && w.contains("operation=car_completo")
            })
            .count()
    };
    while warned() < missing && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(warned(), missing, "{:?}", warnings.lock().unwrap());
}

#[tokio::test]
async fn a_blank_purpose_is_refused_before_any_request() {
    let srv = TestServer::start().await.unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::open(dir.path().join("a.sqlite3")).unwrap();
    let e = srv
        .client_builder(&conta)
        .archive(
            archive,
            ArchivePolicy::new(" ", LegalBasis::Contract, Freshness::Never),
        )
        .build()
        .unwrap_err();
    assert!(
        matches!(e, Error::Config(ref m) if m.contains("finalidade")),
        "{e}"
    );
    assert_eq!(srv.conta_state(&conta).await.unwrap().saldo, dec!(100));
}

/// An account whose key is rotated (the server's store given a new key for it, as
/// `carapi-server conta rotacionar` does): once the new fingerprint is linked to the old one,
/// listing by either gives the same entries, those bought with both keys.
#[tokio::test]
async fn after_a_key_rotation_both_fingerprints_list_the_same_entries() {
    use carapi_service::store::{OpenMode, SqliteStore};
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("double.sqlite3").display());
    let srv = TestServer::builder()
        .database(db.clone())
        .start()
        .await
        .unwrap();
    let conta = srv.conta().saldo(dec!(100)).create().await.unwrap();
    let archive = Archive::open(dir.path().join("acervo.sqlite3")).unwrap();
    let old = srv
        .client_builder(&conta)
        .rate_limit(None)
        .archive(archive.clone(), policy(Freshness::Never))
        .build()
        .unwrap();
    let (codigo, doc) = record_with_owner();
    old.car(&codigo).await.unwrap();

    let new_key = carapi_service::auth::generate_key();
    let store = SqliteStore::open(&db, OpenMode::Existing).await.unwrap();
    assert!(
        store
            .rotate_key(conta.conta_id, &carapi_service::auth::key_hash(&new_key))
            .await
            .unwrap()
    );
    store.close().await;
    let new = carapi_sdk::Client::builder()
        .base_url(srv.base_url())
        .api_key(new_key.clone())
        .rate_limit(None)
        .archive(archive.clone(), policy(Freshness::Never))
        .build()
        .unwrap();
    new.proprietario(doc.as_str()).await.unwrap();
    let (fp_old, fp_new) = (
        carapi_sdk::archive::fingerprint(&conta.api_key),
        carapi_sdk::archive::fingerprint(&new_key),
    );
    assert_ne!(fp_old, fp_new);
    let seqs = |fp: &str| -> Vec<u64> {
        archive
            .conta_entries(fp)
            .unwrap()
            .into_iter()
            .map(|e| e.seq)
            .collect()
    };
    assert_eq!(seqs(&fp_old), [1], "before the link, each key its own");
    assert_eq!(seqs(&fp_new), [2]);

    archive.link_contas(&fp_old, &fp_new).unwrap();
    assert_eq!(seqs(&fp_old), [1, 2], "the old fingerprint lists both");
    assert_eq!(seqs(&fp_new), [1, 2], "the new fingerprint lists both");
    let mut both = vec![fp_old.clone(), fp_new.clone()];
    both.sort();
    assert_eq!(archive.linked_contas(&fp_new).unwrap(), both);

    // A second rotation links the third key to the same account.
    let third = carapi_sdk::archive::fingerprint("car_terceira");
    archive.link_contas(&fp_new, &third).unwrap();
    assert_eq!(seqs(&third), [1, 2]);
    assert_eq!(seqs(&fp_old), [1, 2]);
    assert!(archive.link_contas("não é impressão", &fp_new).is_err());
    assert!(
        archive.verify(None).unwrap().is_ok(),
        "links leave the chain as it was"
    );
}
