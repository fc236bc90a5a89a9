//! Lookups in constant time, small versions of the scale figures: the first lookup of a record
//! writes nothing into `imoveis` (the "already consolidated" fact lives in a side table), and an
//! owner lookup reads the first 200 codes by index plus whether a 201st exists, in a fixed
//! number of queries whose plans use the indexes. On SQLite always, on PostgreSQL when
//! `DATABASE_URL` is set.

use std::sync::Arc;

use carapi_sdk::{CpfCnpj, EndpointConsulta};
use carapi_service::Centavos;
use carapi_service::store::prelude::*;
use carapi_service::store::{
    Cobranca, CobrancaResult, ContaId, NovaContaRecord, OwnerImovel, PgStore, SqliteStore, sql,
};
use chrono::{NaiveDate, Utc};
use sqlx::Connection;
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

use crate::helpers::{App, CODIGO, copies_with_owner};
use crate::postgres::TestDatabase;

/// A SQLite store over a fresh file, the file's URL, and its folder.
async fn sqlite() -> (Arc<SqliteStore>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let store = Arc::new(SqliteStore::connect(&url).await.unwrap());
    (store, url, dir)
}

async fn conta(store: &dyn Store) -> ContaId {
    store
        .create_conta(NovaContaRecord {
            chave_hash: format!("{:064x}", Uuid::new_v4().as_u128()),
            saldo: Centavos::new(10_000),
            legado: false,
            documento: None,
            email: None,
            at: Utc::now(),
        })
        .await
        .unwrap()
}

fn cobranca(conta: ContaId) -> Cobranca {
    let day: NaiveDate = "2026-05-04".parse().unwrap();
    Cobranca {
        request_id: uuid::Uuid::new_v4(),
        conta,
        endpoint: EndpointConsulta::CarBasico,
        chave: CODIGO.into(),
        consolidate: Some(CODIGO.parse().unwrap()),
        at: Utc::now(),
        day,
    }
}

/// First lookup `cache: false`, then `cache: true`, while any UPDATE of `imoveis` aborts.
async fn two_cobrancas(store: &dyn Store, name: &str) {
    let a = conta(store).await;
    let r = store.charge_consulta(cobranca(a)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: false, .. })),
        "{name}: first lookup {r:?}"
    );
    let r = store.charge_consulta(cobranca(a)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: true, .. })),
        "{name}: second lookup {r:?}"
    );
    let b = conta(store).await;
    let r = store.charge_consulta(cobranca(b)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: true, .. })),
        "{name}: another account's lookup of the same record {r:?}"
    );
}

#[tokio::test]
async fn first_lookup_of_a_record_writes_nothing_into_imoveis_sqlite() {
    let (store, url, _dir) = sqlite().await;
    store
        .write_imoveis(&carapi_service::dados::bundled())
        .await
        .unwrap();
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "CREATE TRIGGER imoveis_intocado BEFORE UPDATE ON imoveis
         BEGIN SELECT RAISE(ABORT, 'a lookup updated imoveis'); END",
    )
    .execute(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
    two_cobrancas(store.as_ref(), "sqlite").await;
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn first_lookup_of_a_record_writes_nothing_into_imoveis_postgres() {
    let Some(database) =
        TestDatabase::create("first_lookup_of_a_record_writes_nothing_into_imoveis_postgres").await
    else {
        return;
    };
    let store = database.store().await;
    store
        .write_imoveis(&carapi_service::dados::bundled())
        .await
        .unwrap();
    sqlx::raw_sql(
        "CREATE FUNCTION imoveis_intocado() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN RAISE EXCEPTION 'a lookup updated imoveis'; END $$;
         CREATE TRIGGER imoveis_intocado BEFORE UPDATE ON imoveis
           FOR EACH ROW EXECUTE FUNCTION imoveis_intocado();",
    )
    .execute(store.pool())
    .await
    .unwrap();
    two_cobrancas(store.as_ref(), "postgres").await;
}

/// 250 records of one owner: 200 returned, in code order, with `truncado`.
async fn owner_of_250(store: &dyn Store, name: &str) {
    let owner = CpfCnpj::from_base("ESCALA00001A").unwrap();
    let copies = copies_with_owner(250, &owner);
    store.write_imoveis(&copies).await.unwrap();
    let (v, truncado) = store.imoveis_of_documento(&owner, 200).await.unwrap();
    assert_eq!((v.len(), truncado), (200, true), "{name}");
    let codigos: Vec<_> = v.iter().map(|i| i.codigo_car.as_str()).collect();
    let expected: Vec<_> = copies[..200]
        .iter()
        .map(|i| i.codigo_car.as_str())
        .collect();
    assert_eq!(codigos, expected, "{name}");
    assert!(v.iter().all(|i| i.proprietarios == copies[0].proprietarios));
    // The owner lookup's narrow query: the same records' item columns, in the same order.
    let (itens, truncado) = store.itens_of_documento(&owner, 200).await.unwrap();
    let wanted: Vec<OwnerImovel> = v.iter().map(OwnerImovel::from).collect();
    assert_eq!((itens, truncado), (wanted, true), "{name}");
    let (v, truncado) = store.imoveis_of_documento(&owner, 250).await.unwrap();
    assert_eq!((v.len(), truncado), (250, false), "{name}");
    let (itens, truncado) = store.itens_of_documento(&owner, 250).await.unwrap();
    assert_eq!((itens.len(), truncado), (250, false), "{name}");
    let nobody = CpfCnpj::from_base("ESCALA00002A").unwrap();
    assert_eq!(
        store.itens_of_documento(&nobody, 200).await.unwrap(),
        (vec![], false)
    );
}

#[tokio::test]
async fn owner_of_250_cars_gets_200_and_truncado_on_both_stores() {
    let (store, _url, _dir) = sqlite().await;
    owner_of_250(store.as_ref(), "sqlite").await;
    if let Some(database) =
        TestDatabase::create("owner_of_250_cars_gets_200_and_truncado_on_both_stores").await
    {
        owner_of_250(database.store().await.as_ref(), "postgres").await;
    }
}

#[tokio::test]
async fn owner_of_250_cars_through_the_router_is_charged_once() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let owner = CpfCnpj::from_base("ESCALA00002A").unwrap();
    app.write(&copies_with_owner(250, &owner)).await;
    let v = app
        .get(&c.api_key, &format!("/v1/proprietario/{}", owner.as_str()))
        .await
        .ok();
    assert_eq!(v["itens"].as_array().unwrap().len(), 200);
    assert_eq!(
        (v["total"].as_u64(), v["truncado"].as_bool()),
        (Some(200), Some(true))
    );
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["itens"].as_array().unwrap().len(), 1, "{h}");
}

/// The SQLite plan of `sql` (one line per step).
async fn plan_sqlite(c: &mut SqliteConnection, consulta: &str, binds: &[&str]) -> String {
    let sql = format!("EXPLAIN QUERY PLAN {consulta}");
    let mut q = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql);
    for b in binds {
        q = q.bind(*b);
    }
    let lines = q.fetch_all(c).await.unwrap();
    lines
        .into_iter()
        .map(|l| l.3)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn owner_lookup_plans_use_the_indexes_sqlite() {
    let (store, url, _dir) = sqlite().await;
    let owner = CpfCnpj::from_base("ESCALA00003A").unwrap();
    store
        .write_imoveis(&copies_with_owner(250, &owner))
        .await
        .unwrap();
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("ANALYZE").execute(&mut c).await.unwrap();
    let codigos = plan_sqlite(&mut c, sql::SQLITE_CODIGOS_DO_DOCUMENTO, &["x", "201"]).await;
    assert!(
        codigos.contains("USING COVERING INDEX imovel_proprietarios_documento (documento=?)"),
        "{codigos}"
    );
    assert!(!codigos.contains("TEMP B-TREE FOR ORDER BY"), "{codigos}");
    let itens = plan_sqlite(&mut c, sql::SQLITE_ITENS_DO_DOCUMENTO, &["x", "201"]).await;
    assert!(
        itens.contains("USING COVERING INDEX imovel_proprietarios_documento (documento=?)"),
        "{itens}"
    );
    assert!(itens.contains("SEARCH i USING INDEX"), "{itens}");
    assert!(!itens.contains("SCAN i"), "{itens}");
    for consulta in [sql::SQLITE_IMOVEL_BY_CODIGO, sql::SQLITE_OWNERS_BY_CODIGO] {
        let plan = plan_sqlite(&mut c, consulta, &["DF-5300108-0"]).await;
        assert!(plan.contains("SEARCH"), "{consulta}:\n{plan}");
        assert!(
            plan.contains("PRIMARY KEY") || plan.contains("sqlite_autoindex_imoveis_1"),
            "{consulta}:\n{plan}"
        );
        assert!(!plan.contains("SCAN"), "{consulta}:\n{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{consulta}:\n{plan}");
    }
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn owner_lookup_plans_use_the_indexes_postgres() {
    let Some(database) = TestDatabase::create("owner_lookup_plans_use_the_indexes_postgres").await
    else {
        return;
    };
    let store: Arc<PgStore> = database.store().await;
    let owner = CpfCnpj::from_base("ESCALA00004A").unwrap();
    store
        .write_imoveis(&copies_with_owner(250, &owner))
        .await
        .unwrap();
    let mut c = store.pool().acquire().await.unwrap();
    sqlx::query("ANALYZE").execute(&mut *c).await.unwrap();
    // Small tables: without this the planner may prefer reading their few pages sequentially;
    // with it, a sequential scan still appears when no index can serve the query.
    sqlx::query("SET enable_seqscan = off")
        .execute(&mut *c)
        .await
        .unwrap();
    let plan = |consulta: &str| format!("EXPLAIN {consulta}");
    let lines: Vec<String> = sqlx::query_scalar(&plan(sql::POSTGRES_CODIGOS_DO_DOCUMENTO))
        .bind(owner.as_str())
        .bind(201_i64)
        .fetch_all(&mut *c)
        .await
        .unwrap();
    let text = lines.join("\n");
    assert!(text.contains("imovel_proprietarios_documento"), "{text}");
    assert!(
        !text.contains("Seq Scan") && !text.contains("Sort"),
        "{text}"
    );
    let lines: Vec<String> = sqlx::query_scalar(&plan(sql::POSTGRES_ITENS_DO_DOCUMENTO))
        .bind(owner.as_str())
        .bind(201_i64)
        .fetch_all(&mut *c)
        .await
        .unwrap();
    let text = lines.join("\n");
    assert!(text.contains("imovel_proprietarios_documento"), "{text}");
    assert!(!text.contains("Seq Scan"), "{text}");
    let imoveis = sql::postgres_imoveis_by_codigos();
    for consulta in [imoveis.as_str(), sql::POSTGRES_OWNERS_BY_CODIGOS] {
        let lines: Vec<String> = sqlx::query_scalar(&plan(consulta))
            .bind(vec!["a".to_owned(), "b".to_owned()])
            .fetch_all(&mut *c)
            .await
            .unwrap();
        let text = lines.join("\n");
        assert!(text.contains("Index"), "{consulta}:\n{text}");
        assert!(!text.contains("Seq Scan"), "{consulta}:\n{text}");
    }
}
