//! The webhook secret: at least 32 bytes, from the environment or a file; the command-line
//! flag still works but is warned against (it shows in /proc/*/cmdline).

use carapi_service::pix::webhook::{PixEvent, SIGNATURE_HEADER, sign};
use carapi_service::{Config, ServerError, spawn};

use crate::processo::{serve, servir_recusado};

const SEGREDO: &str = "segredo-do-operador-com-40-bytes-exatos";

/// The status of a signed `pago` webhook for an unknown payment: 401 when `secret` is not
/// the server's.
async fn webhook(base: &str, secret: &str) -> u16 {
    let corpo = serde_json::to_vec(&PixEvent::pago("PIXNAOEXISTE", chrono::Utc::now())).unwrap();
    reqwest::Client::new()
        .post(format!("{base}/webhooks/pix"))
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, sign(secret, &corpo, chrono::Utc::now()))
        .body(corpo)
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
    assert!(matches!(spawn(config).await, Err(ServerError::Invalido(_))));
    let curto = "x".repeat(31);
    let file = dir.path().join("curto");
    std::fs::write(&file, format!("{curto}\n")).unwrap();
    let file = file.display().to_string();
    for (args, env) in [
        (vec!["--webhook-secret", curto.as_str()], vec![]),
        (vec![], vec![("CARAPI_WEBHOOK_SECRET", curto.as_str())]),
        (vec!["--webhook-secret-file", file.as_str()], vec![]),
    ] {
        let out = servir_recusado(&url, &args, &env);
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
    std::fs::write(&file, format!("{SEGREDO}\n")).unwrap();
    let file = file.display().to_string();
    let outro = "o".repeat(40);
    {
        let s = serve(&url, &["--webhook-secret-file", &file], &[]);
        assert!(
            !s.avisos.iter().any(|l| l.contains("cmdline")),
            "{:?}",
            s.avisos
        );
        assert_ne!(webhook(&s.base, SEGREDO).await, 401);
        assert_eq!(webhook(&s.base, &outro).await, 401);
    }
    {
        let s = serve(&url, &[], &[("CARAPI_WEBHOOK_SECRET", SEGREDO)]);
        assert!(
            !s.avisos.iter().any(|l| l.contains("cmdline")),
            "{:?}",
            s.avisos
        );
        assert_ne!(webhook(&s.base, SEGREDO).await, 401);
    }
    let s = serve(&url, &["--webhook-secret", SEGREDO], &[]);
    assert!(
        s.avisos.iter().any(|l| l.contains("/proc/*/cmdline")),
        "{:?}",
        s.avisos
    );
    assert_ne!(webhook(&s.base, SEGREDO).await, 401);
}
