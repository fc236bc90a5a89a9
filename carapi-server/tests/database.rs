//! The database's lifecycle through the binary: only `servir` (and an explicit creation)
//! creates and migrates a database; the admin commands open an existing one whose schema is
//! this binary's, or fail creating nothing; a binary older than its database says so.

use std::path::Path;

use sqlx::Connection;
use sqlx::sqlite::SqliteConnection;

use crate::server_process::{command, serve, serve_refused};

/// Runs the binary with `args`: success, stdout, stderr.
fn run(args: &[&str]) -> (bool, String, String) {
    let out = command(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The admin commands against `url`, each with its required arguments.
fn admin(url: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    vec![
        s(&["razao", "conferir", "--banco", url]),
        s(&["conta", "criar", "--banco", url]),
        s(&["conta", "revogar", "--conta", "1", "--banco", url]),
        s(&["segredo-webhook", "--banco", url]),
        s(&[
            "pix",
            "pagar",
            "ABC",
            "--servidor",
            "http://127.0.0.1:9",
            "--banco",
            url,
        ]),
    ]
}

#[test]
fn admin_commands_on_a_missing_database_fail_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("com-erro-de-digitacao.db");
    let url = format!("sqlite://{}", file.display());
    for args in admin(&url) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = run(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains("não existe"), "{args:?}: {err}");
        let created: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(created.is_empty(), "{args:?} created {created:?}");
    }
    // An explicit creation creates it.
    let (ok, _, err) = run(&["conta", "criar", "--banco", &url, "--criar-banco"]);
    assert!(ok, "{err}");
    let (ok, out, err) = run(&["razao", "conferir", "--banco", &url]);
    assert!(ok && out.contains("OK"), "{out} {err}");
}

async fn versions(file: &Path) -> Vec<i64> {
    let mut c = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    let v = sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
    v
}

async fn execute(file: &Path, sql: &str) {
    let mut c = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    sqlx::query(sql).execute(&mut c).await.unwrap();
    c.close().await.unwrap();
}

#[tokio::test]
async fn migrations_are_logged_an_older_binary_refuses_a_newer_database_and_admin_commands_never_migrate()
 {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("carapi.db");
    let url = format!("sqlite://{}", file.display());
    {
        let s = serve(&url, &[], &[("CARAPI_LOG", "info")]);
        let warnings = s.warnings.join("\n");
        assert!(warnings.contains("aplicando migrações [1, 2"), "{warnings}");
    }
    let all = versions(&file).await;
    let last = *all.last().unwrap();
    // A database one migration behind this binary: the admin commands refuse it and leave its
    // schema as it was (a running older server keeps its schema).
    execute(
        &file,
        &format!("DELETE FROM _sqlx_migrations WHERE version = {last}"),
    )
    .await;
    let (ok, _, err) = run(&["razao", "conferir", "--banco", &url]);
    assert!(
        !ok && err.contains(&format!("precisa do esquema {last}")),
        "{err}"
    );
    assert_eq!(versions(&file).await.len(), all.len() - 1, "not migrated");
    execute(
        &file,
        &format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             SELECT {last}, description, success, checksum, execution_time FROM _sqlx_migrations
             WHERE version = {}",
            all[0]
        ),
    )
    .await;
    // A database a newer binary migrated: every command, servir included, refuses it in
    // Portuguese and names the schema it needs.
    let fresh = last + 1;
    execute(
        &file,
        &format!(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES ({fresh}, 'futura', 1, x'00', 0)"
        ),
    )
    .await;
    let (ok, _, err) = run(&["razao", "conferir", "--banco", &url]);
    assert!(!ok, "{err}");
    assert!(
        err.contains(&format!("esquema {fresh}")) && err.contains("mais novo"),
        "{err}"
    );
    let out = serve_refused(&url, &[], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(&format!("esquema {fresh}")),
        "{err}"
    );
}
