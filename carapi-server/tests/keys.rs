//! `account rotate` and `account revoke`: the old key is refused by the store at once and by
//! every running server (two on one database here) within the key cache's few seconds.

use carapi_service::{NovaConta, spawn};
use serde_json::Value;

use crate::network::GUARD;
use crate::server::databases;
use crate::server_process::command;

/// `account SUB --conta ID --database URL --json`: its JSON output.
fn conta(sub: &str, id: i64, url: &str) -> Value {
    let out = command(&[
        "account",
        sub,
        "--conta",
        &id.to_string(),
        "--database",
        url,
        "--json",
    ])
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Waits (at most [`GUARD`]) until `GET /v1/saldo` with `key` answers `status` on `base`.
async fn until(http: &reqwest::Client, base: &str, key: &str, status: u16) {
    let wait = async {
        loop {
            let r = http
                .get(format!("{base}/v1/saldo"))
                .bearer_auth(key)
                .send()
                .await
                .unwrap();
            if r.status().as_u16() == status {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(GUARD, wait)
        .await
        .unwrap_or_else(|_| panic!("{base}: never {status}"));
}

#[tokio::test]
async fn a_rotated_or_revoked_key_is_refused_by_every_server_on_the_database() {
    for database in databases("chaves_revogadas").await {
        let mut servers = Vec::new();
        for _ in 0..2 {
            let mut config = carapi_service::Config::local(&database.url);
            config.rate_limit = None;
            servers.push(spawn(config).await.unwrap());
        }
        let http = reqwest::Client::new();
        let created = servers[0].create_conta(NovaConta::default()).await.unwrap();
        for s in &servers {
            until(&http, &s.base_url(), &created.api_key, 200).await;
        }
        // Rotate: a new key printed once; the old one refused everywhere, the new one served.
        let v = conta("rotate", created.conta_id.0, &database.url);
        assert_eq!(v["contaId"], created.conta_id.0, "[{}] {v}", database.name);
        let fresh = v["apiKey"].as_str().unwrap().to_owned();
        assert_ne!(fresh, created.api_key);
        for s in &servers {
            until(&http, &s.base_url(), &created.api_key, 401).await;
            until(&http, &s.base_url(), &fresh, 200).await;
        }
        // Revoke: the current key refused everywhere.
        conta("revoke", created.conta_id.0, &database.url);
        for s in &servers {
            until(&http, &s.base_url(), &fresh, 401).await;
        }
        // An unknown account is an error.
        let out = command(&[
            "account",
            "revoke",
            "--conta",
            "999999",
            "--database",
            &database.url,
        ])
        .output()
        .unwrap();
        assert!(!out.status.success(), "[{}]", database.name);
        for s in servers {
            s.shutdown().await;
        }
    }
}
