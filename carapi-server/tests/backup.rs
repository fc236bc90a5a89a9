//! `carapi-server backup`: a consistent SQLite copy taken under write load, mode 0600, that
//! opens and passes the ledger check, and restores by copying it back with the server stopped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::helpers::CODIGO;
use crate::server::{Server, databases};
use crate::server_process::{command, serve};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_is_private_consistent_and_restores() {
    let database = databases("backup_sob_carga").await.remove(0);
    let s = Arc::new(Server::new(&database).await);
    let c = s.conta(1_000).await;
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let load: Vec<_> = (0..4)
        .map(|_| {
            let (s, k, stop, done) = (s.clone(), c.api_key.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let (st, v) = s.get(&k, &format!("/v1/car/{CODIGO}")).await;
                    assert_eq!(st, 200, "{v}");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while done.load(Ordering::Relaxed) < 50 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copia.db");
    let (url, destination) = (database.url.clone(), copy.display().to_string());
    let out = tokio::task::spawn_blocking(move || {
        command(&["backup", &destination, "--banco", &url])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let during = done.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for t in load {
        t.await.unwrap();
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    eprintln!("backup under load ({during} charged lookups by then): {err}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&copy).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let backup_url = format!("sqlite://{}", copy.display());
    let check = command(&["razao", "conferir", "--banco", &backup_url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success() && text.contains("OK"), "{text}");
    assert!(!text.contains("INCONSISTENTE"), "{text}");
    // A second backup to the same destination is refused; so is PostgreSQL.
    let again = command(&[
        "backup",
        &copy.display().to_string(),
        "--banco",
        &database.url,
    ])
    .output()
    .unwrap();
    assert!(!again.status.success());
    let pg = command(&[
        "backup",
        "/tmp/nunca.db",
        "--banco",
        "postgres://u@127.0.0.1:1/x",
    ])
    .output()
    .unwrap();
    assert!(!pg.status.success() && String::from_utf8_lossy(&pg.stderr).contains("pg_dump"));
    // Restore: the copy in place of a database (server stopped), served as it was.
    let restored = dir.path().join("restaurado.db");
    std::fs::copy(&copy, &restored).unwrap();
    let srv = serve(&format!("sqlite://{}", restored.display()), &[], &[]);
    let v: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/v1/saldo", srv.base))
        .bearer_auth(&c.api_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v["saldoReais"].as_f64().is_some_and(|x| x < 1_000.0), "{v}");
}
