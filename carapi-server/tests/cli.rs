//! The `carapi-server` binary: the exact command forms its README documents.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use carapi_service::store::SqliteStore;
use carapi_service::store::prelude::*;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("CARAPI_DATABASE_URL")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn db(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}", dir.path().join("cli.db").display())
}

#[tokio::test]
async fn account_create_import_seed_and_ledger_check() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(&dir);
    let (ok, out, err) = run(&[
        "account",
        "create",
        "--database",
        &url,
        "--criar-banco",
        "--json",
        "--saldo",
        "12.34",
    ]);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    let key = v["apiKey"].as_str().unwrap();
    assert!(key.starts_with("car_"));
    let id = v["contaId"].as_i64().unwrap();
    let (ok, out, _) = run(&[
        "account",
        "create",
        "--database",
        &url,
        "--legado",
        "--sem-documento",
        "--email",
        "x@example.com",
    ]);
    assert!(ok);
    assert!(out.contains("car_"), "the key is printed once: {out}");
    let (ok, _, err) = run(&[
        "account",
        "create",
        "--database",
        &url,
        "--documento",
        "529.982.247-24",
    ]);
    assert!(!ok && err.contains("documento"), "{err}");
    let (ok, _, _) = run(&[
        "account",
        "create",
        "--database",
        &url,
        "--documento",
        "529.982.247-25",
        "--sem-documento",
    ]);
    assert!(!ok, "--documento and --sem-documento conflict");

    let store = SqliteStore::connect(&url).await.unwrap();
    let c = store
        .conta(carapi_service::ContaId(id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.saldo, carapi_service::Centavos::new(1234));
    assert!(!c.legado && c.documento.is_some());
    let ids = store.contas().await.unwrap();
    let legado = store.conta(ids[1]).await.unwrap().unwrap();
    assert!(legado.legado && legado.documento.is_none());
    assert_eq!(legado.email.as_deref(), Some("x@example.com"));

    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../carapi-loader/data/sicar/imoveis_mt.csv"
    );
    for _ in 0..2 {
        let (ok, out, err) = run(&["import", csv, "--database", &url]);
        assert!(ok, "{err}");
        assert!(out.contains("10"), "{out}");
    }
    assert_eq!(
        store.count_imoveis().await.unwrap(),
        10,
        "import is idempotent"
    );
    let (ok, _, err) = run(&["import", "/nao/existe.csv", "--database", &url]);
    assert!(!ok && err.contains("existe.csv"), "{err}");

    for _ in 0..2 {
        let (ok, _, err) = run(&[
            "seed",
            "--synthetic",
            "40",
            "--seed",
            "7",
            "--database",
            &url,
        ]);
        assert!(ok, "{err}");
    }
    assert_eq!(
        store.count_imoveis().await.unwrap(),
        50,
        "same seed, same records"
    );

    let (ok, out, err) = run(&["ledger", "check", "--database", &url]);
    assert!(ok, "{err}");
    assert_eq!(out.matches("OK").count(), 2, "{out}");
    let (ok, out, _) = run(&[
        "ledger",
        "check",
        "--database",
        &url,
        "--conta",
        &id.to_string(),
        "--json",
    ]);
    assert!(ok);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["consistente"], true);
    assert_eq!(v["saldo"], 1234);
}

#[tokio::test]
async fn serve_logs_its_address_pix_pay_confirms_and_sigterm_stops_gracefully() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(&dir);
    let (_, out, _) = run(&[
        "account",
        "create",
        "--database",
        &url,
        "--create-database",
        "--json",
    ]);
    let key = serde_json::from_str::<Value>(out.trim()).unwrap()["apiKey"]
        .as_str()
        .unwrap()
        .to_owned();

    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--database", &url])
        .env("CARAPI_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(u) = line
                .split_whitespace()
                .find(|w| w.starts_with("http://127.0.0.1:"))
            {
                let _ = tx.send(u.to_owned());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("serve logs the bound address");

    let http = reqwest::Client::new();
    let v: Value = http
        .get(format!("{base}/v1/saldo"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["saldoReais"], 100.0);
    let created: Value = http
        .post(format!("{base}/v1/recarga"))
        .bearer_auth(&key)
        .json(&serde_json::json!({"valor": 500}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let payment = created["paymentId"].as_str().unwrap();
    // the database's own secret signs (none is built in): `webhook-secret` prints it
    let (ok, secret, err) = run(&["webhook-secret", "--database", &url]);
    assert!(ok, "{err}");
    let secret = secret.trim();
    assert!(
        secret.len() == 64 && secret.bytes().all(|b| b.is_ascii_hexdigit()),
        "{secret}"
    );
    let (ok, again, _) = run(&["webhook-secret", "--database", &url]);
    assert!(ok && again.trim() == secret, "stored, not regenerated");
    // without the database, the payment is not in the provider's book: nothing is credited
    let (ok, out, err) = run(&[
        "pix",
        "pay",
        payment,
        "--server",
        &base,
        "--webhook-secret",
        secret,
        "--database",
        &format!("sqlite://{}", dir.path().join("outro.db").display()),
    ]);
    assert!(!ok, "{out} {err}");
    let (ok, out, err) = run(&["pix", "pay", payment, "--server", &base, "--database", &url]);
    assert!(ok, "{out} {err}");
    let v: Value = http
        .get(format!("{base}/v1/saldo"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["saldoReais"], 600.0);
    // a wrong secret is refused by the server
    let wrong = "e".repeat(40);
    let (ok, _, err) = run(&[
        "pix",
        "pay",
        payment,
        "--server",
        &base,
        "--webhook-secret",
        &wrong,
        "--database",
        &url,
    ]);
    assert!(!ok && err.contains("401"), "{err}");
    let (ok, _, _) = run(&[
        "pix",
        "pay",
        "PIXNAOEXISTE",
        "--server",
        &base,
        "--database",
        &url,
    ]);
    assert!(!ok);

    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful shutdown exits 0: {status:?}");
}

#[test]
fn serve_modo_teste_refuses_a_non_loopback_address() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(&dir);
    let out = Command::new(BIN)
        .args([
            "serve",
            "--modo-teste",
            "--bind",
            "0.0.0.0:0",
            "--database",
            &url,
        ])
        .env_remove("CARAPI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("loopback"), "{err}");
}

#[tokio::test]
async fn serve_modo_teste_prints_its_token_and_opens_the_test_routes() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(&dir);
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--modo-teste",
            "--bind",
            "127.0.0.1:0",
            "--database",
            &url,
        ])
        .env_remove("CARAPI_TOKEN_TESTE")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let (mut base, mut token) = (None, None);
    while base.is_none() || token.is_none() {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("serve logs its address and token");
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            base = Some(u.to_owned());
        }
        if let Some(t) =
            line.strip_prefix("modo de teste: rotas /_teste com Authorization: Bearer ")
        {
            token = Some(t.trim().to_owned());
        }
    }
    let (base, token) = (base.unwrap(), token.unwrap());
    let http = reqwest::Client::new();
    let url_clock = format!("{base}/_teste/relogio");
    let without = http.get(&url_clock).send().await.unwrap();
    assert_eq!(without.status(), 401);
    let com = http
        .get(&url_clock)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(com.status(), 200);
    let v: Value = com.json().await.unwrap();
    assert!(v["agora"].is_string(), "{v}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn serve_help_shows_no_secret_from_the_environment() {
    let secrets = [
        (
            "CARAPI_DATABASE_URL",
            "postgres://carapi:senha-do-banco-123@db/carapi",
        ),
        (
            "CARAPI_WEBHOOK_SECRET",
            "segredo-do-webhook-0123456789abcdef0123",
        ),
        ("CARAPI_TOKEN_TESTE", "token-de-teste-0123456789"),
    ];
    let mut c = crate::server_process::command(&["serve", "--help"]);
    for (k, v) in secrets {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("CARAPI_DATABASE_URL"), "{help}");
    for (k, v) in secrets {
        assert!(!help.contains(v), "{k}'s value in serve --help:\n{help}");
    }
}

/// The stderr lines of `serve` on `url` with `args`, up to the start-up hint that follows
/// "ouvindo em" (the server is stopped then).
fn start_up_lines(url: &str, args: &[&str]) -> Vec<String> {
    let mut child =
        crate::server_process::command(&["servir", "--bind", "127.0.0.1:0", "--banco", url])
            .args(args)
            .env("CARAPI_LOG", "info")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let hint = line.contains("segredo do webhook PIX");
            let _ = tx.send(line);
            if hint {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        lines.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
    lines
}

#[test]
fn the_start_up_hint_names_the_commands_as_they_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let lines = start_up_lines(&db(&dir), &["--sem-dados-embutidos"]);
    let hint = lines
        .iter()
        .find(|l| l.contains("segredo do webhook PIX"))
        .unwrap_or_else(|| panic!("no hint: {lines:?}"));
    assert!(
        hint.contains("carapi-server segredo-webhook --banco"),
        "{hint}"
    );
    assert!(
        !hint.contains("webhook-secret") && !hint.contains("--database"),
        "{hint}"
    );
}

#[test]
fn only_a_base_that_holds_the_demonstration_records_is_warned_about_them() {
    let dir = tempfile::tempdir().unwrap();
    let demo = format!("sqlite://{}", dir.path().join("demo.db").display());
    let lines = start_up_lines(&demo, &[]);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("80 registros de demonstração embutidos (fictícios)")),
        "{lines:?}"
    );

    let imported = db(&dir);
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../carapi-loader/data/sicar/imoveis_mt.csv"
    );
    let (ok, _, err) = run(&["importar", csv, "--banco", &imported]);
    assert!(ok, "{err}");
    let lines = start_up_lines(&imported, &[]);
    assert!(
        lines
            .iter()
            .any(|l| l.contains(": 0 registros de demonstração")),
        "{lines:?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("(fictícios) servidos e cobrados")),
        "records loaded with importar are no demonstration data: {lines:?}"
    );
}

#[tokio::test]
async fn conta_criar_takes_the_saldo_as_the_cli_reads_money() {
    let dir = tempfile::tempdir().unwrap();
    let url = db(&dir);
    let mut ids = Vec::new();
    for saldo in ["200,00", "200.00", "R$ 1.500,00"] {
        let (ok, out, err) = run(&[
            "conta",
            "criar",
            "--banco",
            &url,
            "--criar-banco",
            "--json",
            "--saldo",
            saldo,
        ]);
        assert!(ok, "{saldo}: {err}");
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        ids.push(v["contaId"].as_i64().unwrap());
    }
    for (saldo, word) in [
        ("1.500", "ambíguo"),
        ("1,500", "ambíguo"),
        ("1,2,3", "inválido"),
    ] {
        let (ok, _, err) = run(&["conta", "criar", "--banco", &url, "--saldo", saldo]);
        assert!(!ok, "{saldo} is refused");
        assert!(err.contains(word), "{saldo}: {err}");
    }
    let store = SqliteStore::connect(&url).await.unwrap();
    let mut saldos = Vec::new();
    for id in ids {
        let c = store
            .conta(carapi_service::ContaId(id))
            .await
            .unwrap()
            .unwrap();
        saldos.push(c.saldo);
    }
    let c = carapi_service::Centavos::new;
    assert_eq!(saldos, [c(20_000), c(20_000), c(150_000)]);
    assert_eq!(
        store.contas().await.unwrap().len(),
        3,
        "a refused amount creates nothing"
    );
}

#[test]
fn a_command_on_a_missing_database_says_how_to_create_one_in_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = run(&["conta", "criar", "--banco", &db(&dir)]);
    assert!(!ok);
    assert!(
        err.contains("`semear` ou `--criar-banco` criam um banco"),
        "{err}"
    );
    assert!(!err.contains("  "), "no run of spaces: {err:?}");
}
