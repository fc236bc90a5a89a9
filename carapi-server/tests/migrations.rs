//! Migrations over a base that already holds data: what a database created by an earlier
//! version reads back the same after the newer migrations run.

use std::path::Path;

use carapi_loader::synthetic::synthetic;
use carapi_service::store::SqliteStore;
use carapi_service::store::prelude::*;
use sqlx::Connection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};

/// A SQLite base at `url` migrated only up to `version` (the repo's migration files copied).
async fn base_at_version(url: &str, version: i64) {
    let origin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../carapi-service/migrations");
    let copy = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(&origin).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let numero: Option<i64> = name.split('_').next().and_then(|n| n.parse().ok());
        if numero.is_some_and(|n| n <= version) && name.ends_with(".sql") {
            std::fs::copy(&f, copy.path().join(&name)).unwrap();
        }
    }
    let opts: SqliteConnectOptions = url.parse().unwrap();
    let mut c = SqliteConnection::connect_with(&opts.create_if_missing(true))
        .await
        .unwrap();
    let migrator = sqlx::migrate::Migrator::new(copy.path()).await.unwrap();
    migrator.run(&mut c).await.unwrap();
    c.close().await.unwrap();
}

#[tokio::test]
async fn owners_stored_before_migration_14_read_back_from_their_without_rowid_table() {
    // Written as the version-13 schema had them: owners in a rowid table.
    let imoveis = synthetic(30, 8);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("antiga.db").display());
    base_at_version(&url, 13).await;
    {
        let opts: SqliteConnectOptions = url.parse().unwrap();
        let mut c = SqliteConnection::connect_with(&opts).await.unwrap();
        for i in &imoveis {
            sqlx::query(
                "INSERT INTO imoveis (codigo_car, status_imovel, area_total_ha, data_cadastro,
                   tipo_imovel, municipio, codigo_municipio_ibge, uf, tem_recibo)
                 VALUES (?, 'AT', '1.5', '2020-01-01 00:00:00', 'IRU', 'Brasília', 5300108, 'DF', 1)",
            )
            .bind(i.codigo_car.as_str())
            .execute(&mut c)
            .await
            .unwrap();
            for (order, p) in i.proprietarios.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome) VALUES (?, ?, ?, ?)",
                )
                .bind(i.codigo_car.as_str())
                .bind(order as i64)
                .bind(p.documento.as_str())
                .bind(&p.nome)
                .execute(&mut c)
                .await
                .unwrap();
            }
        }
        c.close().await.unwrap();
    }
    let store = SqliteStore::connect(&url).await.unwrap();
    for i in &imoveis {
        let chunk = store.imovel(&i.codigo_car).await.unwrap().expect("stored");
        assert_eq!(chunk.proprietarios, i.proprietarios);
        let owner = &i.proprietarios[0].documento;
        let (itens, _) = store.itens_of_documento(owner, 200).await.unwrap();
        assert!(itens.iter().any(|it| it.codigo_car == i.codigo_car));
    }
    store.close().await;
    let opts: SqliteConnectOptions = url.parse().unwrap();
    let mut c = SqliteConnection::connect_with(&opts).await.unwrap();
    let sql: String = sqlx::query_scalar(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'imovel_proprietarios'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    assert!(sql.contains("WITHOUT ROWID"), "{sql}");
    let index: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'imovel_proprietarios_documento'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    assert_eq!(index, 1);
}
