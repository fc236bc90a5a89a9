//! Local mode: no server, no key; the reference server runs in-process over a persistent store.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::harness::*;

#[test]
fn local_car_works_on_a_fresh_machine_and_the_store_persists() {
    let s = TestServer::new(); // only for its temporary directories
    let o = s
        .cmd_without_credentials()
        .args(["--local", "car", CODES[0]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(CODES[0]));
    assert!(
        stderr(&o).contains("conta criada com R$ 100,00"),
        "{}",
        stderr(&o)
    );
    let key = s.dir.path().join("data").join("local").join("api-key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let o = s
        .cmd_without_credentials()
        .env("CARAPI_LOCAL", "1")
        .args(["saldo", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["saldoReais"], 99.0, "same account, same store");
    assert!(!stderr(&o).contains("conta criada"));
}

#[test]
fn local_top_up_is_paid_from_another_process() {
    let s = TestServer::new();
    let mut child = s
        .process()
        .env_remove("CARAPI_BASE_URL")
        .env_remove("CARAPI_API_KEY")
        .args(["--local", "recarga", "criar", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rd = BufReader::new(child.stdout.take().unwrap());
    let id = loop {
        let mut l = String::new();
        assert!(rd.read_line(&mut l).unwrap() > 0);
        if let Some(id) = l.strip_prefix("ID da recarga: ") {
            break id.trim().to_owned();
        }
    };
    let o = s
        .cmd_without_credentials()
        .args(["local", "pagar", &id])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut rd, &mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        rest.contains("Recarga confirmada") && rest.contains("Novo saldo: R$ 6"),
        "{rest}"
    );

    let o = s
        .cmd_without_credentials()
        .args(["local", "pagar", &uuid::Uuid::new_v4().to_string()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
}
