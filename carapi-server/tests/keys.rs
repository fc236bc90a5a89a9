//! `account rotate` and `account revoke`: the old key is refused by the store at once and by
//! every running server (two on one database here) within the key cache's few seconds.

use carapi_service::{NovaConta, spawn};
use serde_json::Value;

use crate::processo::comando;
use crate::rede::GUARDA;
use crate::server::bancos;

/// `account SUB --conta ID --database URL --json`: its JSON output.
fn conta(sub: &str, id: i64, url: &str) -> Value {
    let out = comando(&[
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

/// Waits (at most [`GUARDA`]) until `GET /v1/saldo` with `key` answers `status` on `base`.
async fn ate(http: &reqwest::Client, base: &str, key: &str, status: u16) {
    let espera = async {
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
    tokio::time::timeout(GUARDA, espera)
        .await
        .unwrap_or_else(|_| panic!("{base}: never {status}"));
}

#[tokio::test]
async fn a_rotated_or_revoked_key_is_refused_by_every_server_on_the_database() {
    for database in bancos("chaves_revogadas").await {
        let mut servidores = Vec::new();
        for _ in 0..2 {
            let mut config = carapi_service::Config::local(&database.url);
            config.rate_limit = None;
            servidores.push(spawn(config).await.unwrap());
        }
        let http = reqwest::Client::new();
        let criada = servidores[0]
            .create_conta(NovaConta::default())
            .await
            .unwrap();
        for s in &servidores {
            ate(&http, &s.base_url(), &criada.api_key, 200).await;
        }
        // Rotate: a new key printed once; the old one refused everywhere, the new one served.
        let v = conta("rotate", criada.conta_id.0, &database.url);
        assert_eq!(v["contaId"], criada.conta_id.0, "[{}] {v}", database.nome);
        let nova = v["apiKey"].as_str().unwrap().to_owned();
        assert_ne!(nova, criada.api_key);
        for s in &servidores {
            ate(&http, &s.base_url(), &criada.api_key, 401).await;
            ate(&http, &s.base_url(), &nova, 200).await;
        }
        // Revoke: the current key refused everywhere.
        conta("revoke", criada.conta_id.0, &database.url);
        for s in &servidores {
            ate(&http, &s.base_url(), &nova, 401).await;
        }
        // An unknown account is an error.
        let out = comando(&[
            "account",
            "revoke",
            "--conta",
            "999999",
            "--database",
            &database.url,
        ])
        .output()
        .unwrap();
        assert!(!out.status.success(), "[{}]", database.nome);
        for s in servidores {
            s.shutdown().await;
        }
    }
}
