//! The `/_teste` token: wrong ones count toward the per-address limit of failed
//! authentications, and a token under 32 characters is refused at start.

use crate::server_process::{serve, serve_refused};

const TOKEN: &str = "token-do-modo-de-teste-com-40-caracteres";

#[tokio::test]
async fn wrong_test_tokens_are_limited_per_address_and_the_right_one_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let s = serve(
        &url,
        &[
            "--modo-teste",
            "--token-teste",
            TOKEN,
            "--limite-nao-autenticado",
            "5",
        ],
        &[],
    );
    let http = reqwest::Client::new();
    let clock = format!("{}/_teste/relogio", s.base);
    let mut limited = 0;
    for i in 0..40 {
        let r = http
            .get(&clock)
            .bearer_auth(format!("errado-{i}"))
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            401 => {}
            429 => {
                assert_eq!(r.headers()["carapi-limite"], "taxa");
                limited += 1;
            }
            other => panic!("status {other}"),
        }
    }
    assert!(limited >= 30, "only {limited} of 40 wrong tokens limited");
    let r = http.get(&clock).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[test]
fn a_test_token_under_32_characters_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let short = "a".repeat(31);
    for (args, env) in [
        (
            vec!["--modo-teste", "--token-teste", short.as_str()],
            vec![],
        ),
        (
            vec!["--modo-teste"],
            vec![("CARAPI_TOKEN_TESTE", short.as_str())],
        ),
    ] {
        let out = serve_refused(&url, &args, &env);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("32 caracteres"), "{err}");
    }
    // 32 is enough.
    let _ok = serve(
        &url,
        &["--modo-teste", "--token-teste", &"a".repeat(32)],
        &[],
    );
}

#[test]
fn test_mode_behind_trusted_proxies_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("p.db").display());
    for (args, env) in [
        (
            vec!["--modo-teste", "--proxies-confiaveis", "127.0.0.1"],
            vec![],
        ),
        (
            vec!["--modo-teste"],
            vec![("CARAPI_PROXIES_CONFIAVEIS", "10.0.0.0/8")],
        ),
    ] {
        let out = serve_refused(&url, &args, &env);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--proxies-confiaveis"), "{err}");
    }
}

#[tokio::test]
async fn the_start_up_log_counts_the_bundled_demonstration_records_served() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("d.db").display());
    {
        let s = serve(&url, &[], &[]);
        assert!(
            s.warnings
                .iter()
                .any(|l| l.contains("0 registros de demonstração")),
            "{:?}",
            s.warnings
        );
    }
    {
        let store = carapi_service::store::SqliteStore::connect(&url)
            .await
            .unwrap();
        let n = carapi_service::startup::load_bundled_data(&store)
            .await
            .unwrap();
        assert!(n > 0);
        let s = serve(&url, &[], &[]);
        let line = format!("{n} registros de demonstração");
        assert!(
            s.warnings.iter().any(|l| l.contains(&line)),
            "{line}: {:?}",
            s.warnings
        );
    }
}
