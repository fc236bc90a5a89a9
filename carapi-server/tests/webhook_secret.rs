//! The webhook secret: at least 32 bytes, from the environment or a file; the command-line
//! flag still works but is warned against (it shows in /proc/*/cmdline).

use carapi_service::pix::webhook::{PixEvent, SIGNATURE_HEADER, sign};
use carapi_service::{Config, ServerError, spawn};

use crate::server_process::{serve, serve_refused};

const SECRET: &str = "segredo-do-operador-com-40-bytes-exatos";

/// The status of a signed `pago` webhook for an unknown payment: 401 when `secret` is not
/// the server's.
async fn webhook(base: &str, secret: &str) -> u16 {
    let body = serde_json::to_vec(&PixEvent::pago("PIXNAOEXISTE", chrono::Utc::now())).unwrap();
    reqwest::Client::new()
        .post(format!("{base}/webhooks/pix"))
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, sign(secret, &body, chrono::Utc::now()))
        .body(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_secret_under_32_bytes_is_refused_by_the_library_and_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let mut config = Config::local(&url);
    config.webhook_secret = Some("x".repeat(31));
    assert!(matches!(spawn(config).await, Err(ServerError::Invalid(_))));
    let short = "x".repeat(31);
    let file = dir.path().join("curto");
    std::fs::write(&file, format!("{short}\n")).unwrap();
    let file = file.display().to_string();
    for (args, env) in [
        (vec!["--webhook-secret", short.as_str()], vec![]),
        (vec![], vec![("CARAPI_WEBHOOK_SECRET", short.as_str())]),
        (vec!["--webhook-secret-file", file.as_str()], vec![]),
    ] {
        let out = serve_refused(&url, &args, &env);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {err}");
        assert!(err.contains("32 bytes"), "{err}");
    }
}

#[tokio::test]
async fn the_secret_comes_from_a_file_or_the_environment_and_the_flag_is_warned_against() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let file = dir.path().join("segredo");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    let file = file.display().to_string();
    let other = "o".repeat(40);
    {
        let s = serve(&url, &["--webhook-secret-file", &file], &[]);
        assert!(
            !s.warnings.iter().any(|l| l.contains("cmdline")),
            "{:?}",
            s.warnings
        );
        assert_ne!(webhook(&s.base, SECRET).await, 401);
        assert_eq!(webhook(&s.base, &other).await, 401);
    }
    {
        let s = serve(&url, &[], &[("CARAPI_WEBHOOK_SECRET", SECRET)]);
        assert!(
            !s.warnings.iter().any(|l| l.contains("cmdline")),
            "{:?}",
            s.warnings
        );
        assert_ne!(webhook(&s.base, SECRET).await, 401);
    }
    let s = serve(&url, &["--webhook-secret", SECRET], &[]);
    assert!(
        s.warnings.iter().any(|l| l.contains("/proc/*/cmdline")),
        "{:?}",
        s.warnings
    );
    assert_ne!(webhook(&s.base, SECRET).await, 401);
}

/// A fresh database with one account of 100 BRL: its URL and the account's key.
async fn database_with_conta(dir: &tempfile::TempDir) -> (String, String) {
    let url = format!("sqlite://{}", dir.path().join("p.db").display());
    let store = carapi_service::store::SqliteStore::connect(&url)
        .await
        .unwrap();
    let conta = carapi_service::create_conta(
        &store,
        carapi_service::NovaConta {
            saldo: 100.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    (url, conta.api_key)
}

/// Creates a top-up of 500 BRL: its paymentId.
async fn recarga(base: &str, key: &str) -> String {
    let v: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/v1/recarga"))
        .bearer_auth(key)
        .json(&serde_json::json!({"valor": 500}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    v["paymentId"].as_str().unwrap().to_owned()
}

/// Whether the simulated PSP's book of `url` has `payment_id` paid.
async fn paid_at_psp(url: &str, payment_id: &str) -> bool {
    use carapi_service::store::prelude::*;
    let store = carapi_service::store::SqliteStore::connect(url)
        .await
        .unwrap();
    store
        .psp_state(payment_id)
        .await
        .unwrap()
        .unwrap()
        .paid_at
        .is_some()
}

/// Whether the database of `url` has a webhook secret of its own.
async fn database_secret(url: &str) -> Option<String> {
    let store = carapi_service::store::SqliteStore::connect(url)
        .await
        .unwrap();
    carapi_service::pix::webhook::stored_secret(&store)
        .await
        .unwrap()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Runs the binary with `args` and `env`: success, stdout, stderr.
fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut c = crate::server_process::command(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn pix_pagar_and_segredo_webhook_use_the_servers_secret_file_and_a_401_pays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (url, key) = database_with_conta(&dir).await;
    let file = dir.path().join("segredo");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    let file = file.display().to_string();
    let s = serve(&url, &[], &[("CARAPI_WEBHOOK_SECRET_FILE", &file)]);
    let with_file = [("CARAPI_WEBHOOK_SECRET_FILE", file.as_str())];
    // The server was given a secret: the database has none, and `segredo-webhook` creates
    // none unless asked; with the server's variable it prints the server's secret.
    assert_eq!(database_secret(&url).await, None);
    let (ok, _, err) = run(&["segredo-webhook", "--banco", &url], &[]);
    assert!(!ok && err.contains("--criar-segredo"), "{err}");
    assert_eq!(database_secret(&url).await, None, "nothing written");
    let (ok, out, err) = run(&["segredo-webhook", "--banco", &url], &with_file);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), SECRET);

    let payment = recarga(&s.base, &key).await;
    let pay = |extra: &[&str]| {
        let mut v = vec![
            "pix",
            "pagar",
            &payment,
            "--servidor",
            &s.base,
            "--banco",
            &url,
        ];
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    // No secret given and none in the database: refused before anything is paid.
    let without = pay(&[]);
    let (ok, _, err) = run(&strs(&without), &[]);
    assert!(!ok && err.contains("segredo"), "{err}");
    assert!(!paid_at_psp(&url, &payment).await);
    // A wrong secret: 401, and the charge is still unpaid in the provider's book.
    let wrong = "e".repeat(40);
    let (ok, _, err) = run(&strs(&without), &[("CARAPI_WEBHOOK_SECRET", &wrong)]);
    assert!(!ok && err.contains("401"), "{err}");
    assert!(
        !paid_at_psp(&url, &payment).await,
        "a refused webhook left the charge paid in the PSP's book"
    );
    // The server's secret file, by variable and by flag: paid and credited once.
    let (ok, out, err) = run(&strs(&without), &with_file);
    assert!(ok, "{out} {err}");
    assert!(paid_at_psp(&url, &payment).await);
    let (ok, _, err) = run(&strs(&pay(&["--arquivo-segredo-webhook", &file])), &[]);
    assert!(ok, "{err}");
    let saldo: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/saldo", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(saldo["saldoReais"], 600.0, "{saldo}");
    // Asked to, `segredo-webhook` creates the database's own secret, once.
    let (ok, created, err) = run(
        &["segredo-webhook", "--banco", &url, "--criar-segredo"],
        &[],
    );
    assert!(ok, "{err}");
    assert_eq!(database_secret(&url).await.as_deref(), Some(created.trim()));
}

#[tokio::test]
async fn failed_webhook_signatures_meet_429_per_client_address() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("w.db").display());
    let s = serve(
        &url,
        &["--limite-nao-autenticado", "1"],
        &[("CARAPI_WEBHOOK_SECRET", SECRET)],
    );
    let wrong = "e".repeat(40);
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(webhook(&s.base, &wrong).await);
    }
    assert_eq!(statuses[0], 401, "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    // A malformed signature header counts too.
    let mut malformed = Vec::new();
    for _ in 0..5 {
        let status = reqwest::Client::new()
            .post(format!("{}/webhooks/pix", s.base))
            .header(SIGNATURE_HEADER, "nada")
            .body("{}")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        malformed.push(status);
    }
    assert!(malformed.contains(&429), "{malformed:?}");
}
