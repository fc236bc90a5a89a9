//! `carapi-server backup`: a consistent SQLite copy taken under write load, mode 0600, that
//! opens and passes the ledger check, and restores by copying it back with the server stopped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::helpers::CODIGO;
use crate::processo::{comando, serve};
use crate::server::{Servidor, bancos};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_is_private_consistent_and_restores() {
    let database = bancos("backup_sob_carga").await.remove(0);
    let s = Arc::new(Servidor::new(&database).await);
    let c = s.conta(1_000).await;
    let parar = Arc::new(AtomicBool::new(false));
    let feitas = Arc::new(AtomicUsize::new(0));
    let carga: Vec<_> = (0..4)
        .map(|_| {
            let (s, k, parar, feitas) =
                (s.clone(), c.api_key.clone(), parar.clone(), feitas.clone());
            tokio::spawn(async move {
                while !parar.load(Ordering::Relaxed) {
                    let (st, v) = s.get(&k, &format!("/v1/car/{CODIGO}")).await;
                    assert_eq!(st, 200, "{v}");
                    feitas.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while feitas.load(Ordering::Relaxed) < 50 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let copia = dir.path().join("copia.db");
    let (url, destino) = (database.url.clone(), copia.display().to_string());
    let out = tokio::task::spawn_blocking(move || {
        comando(&["backup", &destino, "--banco", &url])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let durante = feitas.load(Ordering::Relaxed);
    parar.store(true, Ordering::Relaxed);
    for t in carga {
        t.await.unwrap();
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    eprintln!("backup under load ({durante} charged lookups by then): {err}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let modo = std::fs::metadata(&copia).unwrap().permissions().mode();
        assert_eq!(modo & 0o777, 0o600);
    }
    let url_copia = format!("sqlite://{}", copia.display());
    let conferir = comando(&["razao", "conferir", "--banco", &url_copia])
        .output()
        .unwrap();
    let texto = String::from_utf8_lossy(&conferir.stdout);
    assert!(conferir.status.success() && texto.contains("OK"), "{texto}");
    assert!(!texto.contains("INCONSISTENTE"), "{texto}");
    // A second backup to the same destination is refused; so is PostgreSQL.
    let de_novo = comando(&[
        "backup",
        &copia.display().to_string(),
        "--banco",
        &database.url,
    ])
    .output()
    .unwrap();
    assert!(!de_novo.status.success());
    let pg = comando(&[
        "backup",
        "/tmp/nunca.db",
        "--banco",
        "postgres://u@127.0.0.1:1/x",
    ])
    .output()
    .unwrap();
    assert!(!pg.status.success() && String::from_utf8_lossy(&pg.stderr).contains("pg_dump"));
    // Restore: the copy in place of a database (server stopped), served as it was.
    let restaurado = dir.path().join("restaurado.db");
    std::fs::copy(&copia, &restaurado).unwrap();
    let srv = serve(&format!("sqlite://{}", restaurado.display()), &[], &[]);
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
