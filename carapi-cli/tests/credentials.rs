//! `login`, `logout`, `config`, `completions`, broken pipe.

use std::io::Write;
use std::process::Stdio;

use crate::harness::*;

#[test]
fn login_from_stdin_falls_back_to_a_private_file_and_the_key_is_never_printed() {
    let s = TestServer::new();
    let key = s.conta.api_key.clone();
    let o = s
        .cmd_without_credentials()
        .args(["config", "set", "base-url", &s.base_url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    let o = s
        .cmd_without_credentials()
        .args(["login", "--chave-stdin"])
        .write_stdin(format!("{key}\n"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let file = s.dir.path().join("config").join("credentials");
    let err = stderr(&o);
    assert!(
        err.contains(&file.display().to_string()),
        "says where the key went: {err}"
    );
    assert!(err.contains("Saldo: R$ 100,00"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), key);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    let o = s
        .cmd_without_credentials()
        .args(["saldo", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s
        .cmd_without_credentials()
        .args(["config", "show"])
        .output()
        .unwrap();
    let out = stdout(&o) + &stderr(&o);
    assert!(
        out.contains("configurada") && out.contains(&s.base_url),
        "{out}"
    );
    assert!(!out.contains(&key), "the key is never printed");
    let o = s
        .cmd_without_credentials()
        .args(["config", "show", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["baseUrl"], s.base_url.as_str());
    assert_eq!(v["baseUrlOrigem"], "config.toml");
    assert_eq!(v["chaveConfigurada"], true);

    let o = s
        .cmd_without_credentials()
        .args(["logout"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!file.exists());
    let o = s
        .cmd_without_credentials()
        .args(["saldo"])
        .output()
        .unwrap();
    assert_error(&o, 3, "CHAVE_AUSENTE");
}

#[test]
fn login_rejects_a_bad_key_and_needs_a_terminal_or_stdin() {
    let s = TestServer::new();
    let o = s
        .cmd_without_credentials()
        .env("CARAPI_BASE_URL", &s.base_url)
        .args(["login", "--chave-stdin"])
        .write_stdin("car_errada\n")
        .output()
        .unwrap();
    assert_error(&o, 3, "TOKEN_INVALIDO");
    assert!(!s.dir.path().join("config").join("credentials").exists());
    let o = s
        .cmd_without_credentials()
        .args(["login"])
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    assert!(stderr(&o).contains("--chave-stdin"));
}

#[test]
fn config_set_rejects_bad_urls_and_env_wins() {
    let s = TestServer::new();
    let o = s
        .cmd_without_credentials()
        .args(["config", "set", "base-url", "ftp://x"])
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    let o = s
        .cmd_without_credentials()
        .args(["config", "set", "base-url", "http://127.0.0.1:9/"])
        .output()
        .unwrap();
    assert!(o.status.success());
    // CARAPI_BASE_URL (the test server) wins over the file (a dead port).
    let o = s.cmd().args(["saldo"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["config", "show", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["baseUrlOrigem"], "CARAPI_BASE_URL");
    assert!(
        v["chaveOrigem"]
            .as_str()
            .unwrap()
            .contains("CARAPI_API_KEY")
    );
}

#[test]
fn completions_for_each_shell() {
    let s = TestServer::new();
    for sh in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = s
            .cmd_without_credentials()
            .args(["completions", sh])
            .output()
            .unwrap();
        assert!(o.status.success(), "{sh}");
        assert!(stdout(&o).contains("recarga"), "{sh}");
    }
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let s = TestServer::new();
    for c in &CODES {
        assert!(s.cmd().args(["car", c]).output().unwrap().status.success());
    }
    let mut child = s
        .process()
        .args(["historico", "--todas"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("erro:"), "{}", stderr(&o));
    let _ = std::io::stderr().flush();
}
