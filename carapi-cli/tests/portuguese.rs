//! Errors of other crates reach the user in Portuguese (`uuid`, `url`, `keyring`, `humantime`,
//! `std::io`, the HTTP stack, `toml`), with the CLI's exit codes (usage errors exit 2).

use crate::harness::*;

/// English fragments of the wrapped crates' messages that must not reach the user.
const ENGLISH: [&str; 13] = [
    "invalid",
    "found 3",
    "relative URL",
    "without a base",
    "unknown time unit",
    "is not in",
    "socket address",
    "No such file",
    "os error",
    "Connection refused",
    "Platform secure storage",
    "TOML parse error",
    "Address already in use",
];

#[track_caller]
fn assert_portuguese(o: &std::process::Output, output: i32, expected: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(output), "{err}");
    assert!(err.contains(expected), "expected {expected:?} in: {err}");
    for en in ENGLISH {
        assert!(!err.contains(en), "English {en:?} in: {err}");
    }
}

#[test]
fn a_bad_top_up_id_is_a_portuguese_usage_error() {
    let s = TestServer::new();
    for args in [
        &["recarga", "status", "abc"][..],
        &["local", "pagar", "0b5c9e2a-1f3d"][..],
    ] {
        let o = s.cmd().args(args).output().unwrap();
        assert_portuguese(&o, 2, "não é um ID de recarga");
        assert_error(&o, 2, "USO");
    }
}

#[test]
fn a_bad_base_url_is_a_portuguese_usage_error() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["--url-base", "foo", "saldo"])
        .output()
        .unwrap();
    assert_portuguese(
        &o,
        2,
        "URL inválida \"foo\": falta o esquema: comece com http://",
    );
    let o = s
        .cmd_without_credentials()
        .args(["config", "set", "base-url", "http://[::1"])
        .output()
        .unwrap();
    assert_portuguese(&o, 2, "endereço IPv6 inválido");
}

#[cfg(target_os = "linux")]
#[test]
fn a_keyring_failure_is_told_in_portuguese() {
    let s = TestServer::new();
    let o = s
        .cmd_without_credentials()
        .env_remove("CARAPI_KEYRING")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/carapi-test-bus",
        )
        .args(["login", "--chave-stdin"])
        .write_stdin("chave-de-teste\n")
        .output()
        .unwrap();
    assert_portuguese(
        &o,
        0,
        "chaveiro do sistema indisponível (o serviço de chaveiro não respondeu",
    );
}

#[test]
fn other_argument_errors_are_portuguese_usage_errors() {
    let s = TestServer::new();
    for (args, expected) in [
        (
            &[
                "recarga",
                "status",
                "0b5c9e2a-1f3d-4c6e-9a7b-2d4e6f8a0c1e",
                "--tempo-limite",
                "5x",
            ][..],
            "use um número e uma unidade",
        ),
        (&["recargas", "--pagina", "0"][..], "a partir de 1"),
        (&["historico", "--por-pagina", "abc"][..], "a partir de 1"),
        (&["local", "serve", "--endereco", "foo"][..], "use IP:PORTA"),
    ] {
        let o = s.cmd().args(args).output().unwrap();
        assert_portuguese(&o, 2, expected);
    }
}

#[test]
fn file_network_and_config_errors_are_portuguese() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["lote", "car", "nao-existe.txt", "--sim"])
        .output()
        .unwrap();
    assert_portuguese(&o, 1, "arquivo ou diretório não encontrado");
    let o = s
        .cmd()
        .env("CARAPI_BASE_URL", "http://127.0.0.1:9")
        .args(["saldo"])
        .output()
        .unwrap();
    assert_portuguese(&o, 7, "conexão recusada");
    let config = s.dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "base_url = \"http://x\"\n[[[\n").unwrap();
    let o = s
        .cmd_without_credentials()
        .args(["saldo"])
        .output()
        .unwrap();
    assert_portuguese(&o, 1, "TOML inválido na linha 2");
}

#[test]
fn a_busy_listen_address_is_told_in_portuguese() {
    let s = TestServer::new();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = busy.local_addr().unwrap().to_string();
    let o = s
        .cmd()
        .args(["local", "serve", "--endereco", &address])
        .output()
        .unwrap();
    assert_portuguese(&o, 1, "servidor local: endereço já em uso");
}
