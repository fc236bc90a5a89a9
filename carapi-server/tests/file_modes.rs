//! The database files are private to the server's user: the webhook secret, key hashes, CPFs
//! and e-mails are in them.

#[cfg(unix)]
mod unix {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use carapi_service::store::SqliteStore;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[tokio::test]
    async fn a_new_database_and_its_wal_and_shm_are_readable_by_their_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("carapi.db");
        let store = SqliteStore::connect(&format!("sqlite://{}", db.display()))
            .await
            .unwrap();
        // A write: the secret is stored, the WAL and its index exist.
        carapi_service::pix::webhook::database_secret(&store)
            .await
            .unwrap();
        for suffix in ["", "-wal", "-shm"] {
            let file = dir.path().join(format!("carapi.db{suffix}"));
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
        store.close().await;
    }

    #[tokio::test]
    async fn a_database_left_world_readable_is_narrowed_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("carapi.db");
        let url = format!("sqlite://{}", db.display());
        SqliteStore::connect(&url).await.unwrap().close().await;
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = SqliteStore::connect(&url).await.unwrap();
        assert_eq!(mode(&db), 0o600);
        store.close().await;
    }
}
