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

use crate::helpers::{App, CODIGO, copias_com_dono};
use crate::postgres::BancoTeste;

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
            em: Utc::now(),
        })
        .await
        .unwrap()
}

fn cobranca(conta: ContaId) -> Cobranca {
    let dia: NaiveDate = "2026-05-04".parse().unwrap();
    Cobranca {
        request_id: uuid::Uuid::new_v4(),
        conta,
        endpoint: EndpointConsulta::CarBasico,
        chave: CODIGO.into(),
        consolidate: Some(CODIGO.parse().unwrap()),
        em: Utc::now(),
        dia,
    }
}

/// First lookup `cache: false`, then `cache: true`, while any UPDATE of `imoveis` aborts.
async fn duas_cobrancas(store: &dyn Store, nome: &str) {
    let a = conta(store).await;
    let r = store.charge_consulta(cobranca(a)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: false, .. })),
        "{nome}: first lookup {r:?}"
    );
    let r = store.charge_consulta(cobranca(a)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: true, .. })),
        "{nome}: second lookup {r:?}"
    );
    let b = conta(store).await;
    let r = store.charge_consulta(cobranca(b)).await;
    assert!(
        matches!(r, Ok(CobrancaResult::Cobrada { cache: true, .. })),
        "{nome}: another account's lookup of the same record {r:?}"
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
    duas_cobrancas(store.as_ref(), "sqlite").await;
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn first_lookup_of_a_record_writes_nothing_into_imoveis_postgres() {
    let Some(database) =
        BancoTeste::create("first_lookup_of_a_record_writes_nothing_into_imoveis_postgres").await
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
    duas_cobrancas(store.as_ref(), "postgres").await;
}

/// 250 records of one owner: 200 returned, in code order, with `truncado`.
async fn dono_de_250(store: &dyn Store, nome: &str) {
    let dono = CpfCnpj::from_base("ESCALA00001A").unwrap();
    let copias = copias_com_dono(250, &dono);
    store.write_imoveis(&copias).await.unwrap();
    let (v, truncado) = store.imoveis_of_documento(&dono, 200).await.unwrap();
    assert_eq!((v.len(), truncado), (200, true), "{nome}");
    let codigos: Vec<_> = v.iter().map(|i| i.codigo_car.as_str()).collect();
    let esperado: Vec<_> = copias[..200]
        .iter()
        .map(|i| i.codigo_car.as_str())
        .collect();
    assert_eq!(codigos, esperado, "{nome}");
    assert!(v.iter().all(|i| i.proprietarios == copias[0].proprietarios));
    // The owner lookup's narrow query: the same records' item columns, in the same order.
    let (itens, truncado) = store.itens_of_documento(&dono, 200).await.unwrap();
    let esperados: Vec<OwnerImovel> = v.iter().map(OwnerImovel::from).collect();
    assert_eq!((itens, truncado), (esperados, true), "{nome}");
    let (v, truncado) = store.imoveis_of_documento(&dono, 250).await.unwrap();
    assert_eq!((v.len(), truncado), (250, false), "{nome}");
    let (itens, truncado) = store.itens_of_documento(&dono, 250).await.unwrap();
    assert_eq!((itens.len(), truncado), (250, false), "{nome}");
    let ninguem = CpfCnpj::from_base("ESCALA00002A").unwrap();
    assert_eq!(
        store.itens_of_documento(&ninguem, 200).await.unwrap(),
        (vec![], false)
    );
}

#[tokio::test]
async fn owner_of_250_cars_gets_200_and_truncado_on_both_stores() {
    let (store, _url, _dir) = sqlite().await;
    dono_de_250(store.as_ref(), "sqlite").await;
    if let Some(database) =
        BancoTeste::create("owner_of_250_cars_gets_200_and_truncado_on_both_stores").await
    {
        dono_de_250(database.store().await.as_ref(), "postgres").await;
    }
}

#[tokio::test]
async fn owner_of_250_cars_through_the_router_is_charged_once() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let dono = CpfCnpj::from_base("ESCALA00002A").unwrap();
    app.write(&copias_com_dono(250, &dono)).await;
    let v = app
        .get(&c.api_key, &format!("/v1/proprietario/{}", dono.as_str()))
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
async fn plano_sqlite(c: &mut SqliteConnection, consulta: &str, binds: &[&str]) -> String {
    let sql = format!("EXPLAIN QUERY PLAN {consulta}");
    let mut q = sqlx::query_as::<_, (i64, i64, i64, String)>(&sql);
    for b in binds {
        q = q.bind(*b);
    }
    let linhas = q.fetch_all(c).await.unwrap();
    linhas
        .into_iter()
        .map(|l| l.3)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn owner_lookup_plans_use_the_indexes_sqlite() {
    let (store, url, _dir) = sqlite().await;
    let dono = CpfCnpj::from_base("ESCALA00003A").unwrap();
    store
        .write_imoveis(&copias_com_dono(250, &dono))
        .await
        .unwrap();
    let mut c = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("ANALYZE").execute(&mut c).await.unwrap();
    let codigos = plano_sqlite(&mut c, sql::SQLITE_CODIGOS_DO_DOCUMENTO, &["x", "201"]).await;
    assert!(
        codigos.contains("USING COVERING INDEX imovel_proprietarios_documento (documento=?)"),
        "{codigos}"
    );
    assert!(!codigos.contains("TEMP B-TREE FOR ORDER BY"), "{codigos}");
    let itens = plano_sqlite(&mut c, sql::SQLITE_ITENS_DO_DOCUMENTO, &["x", "201"]).await;
    assert!(
        itens.contains("USING COVERING INDEX imovel_proprietarios_documento (documento=?)"),
        "{itens}"
    );
    assert!(itens.contains("SEARCH i USING INDEX"), "{itens}");
    assert!(!itens.contains("SCAN i"), "{itens}");
    for consulta in [sql::SQLITE_IMOVEL_POR_CODIGO, sql::SQLITE_DONOS_POR_CODIGO] {
        let plano = plano_sqlite(&mut c, consulta, &["DF-5300108-0"]).await;
        assert!(plano.contains("SEARCH"), "{consulta}:\n{plano}");
        assert!(
            plano.contains("PRIMARY KEY") || plano.contains("sqlite_autoindex_imoveis_1"),
            "{consulta}:\n{plano}"
        );
        assert!(!plano.contains("SCAN"), "{consulta}:\n{plano}");
        assert!(!plano.contains("TEMP B-TREE"), "{consulta}:\n{plano}");
    }
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn owner_lookup_plans_use_the_indexes_postgres() {
    let Some(database) = BancoTeste::create("owner_lookup_plans_use_the_indexes_postgres").await
    else {
        return;
    };
    let store: Arc<PgStore> = database.store().await;
    let dono = CpfCnpj::from_base("ESCALA00004A").unwrap();
    store
        .write_imoveis(&copias_com_dono(250, &dono))
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
    let plano = |consulta: &str| format!("EXPLAIN {consulta}");
    let linhas: Vec<String> = sqlx::query_scalar(&plano(sql::POSTGRES_CODIGOS_DO_DOCUMENTO))
        .bind(dono.as_str())
        .bind(201_i64)
        .fetch_all(&mut *c)
        .await
        .unwrap();
    let texto = linhas.join("\n");
    assert!(texto.contains("imovel_proprietarios_documento"), "{texto}");
    assert!(
        !texto.contains("Seq Scan") && !texto.contains("Sort"),
        "{texto}"
    );
    let linhas: Vec<String> = sqlx::query_scalar(&plano(sql::POSTGRES_ITENS_DO_DOCUMENTO))
        .bind(dono.as_str())
        .bind(201_i64)
        .fetch_all(&mut *c)
        .await
        .unwrap();
    let texto = linhas.join("\n");
    assert!(texto.contains("imovel_proprietarios_documento"), "{texto}");
    assert!(!texto.contains("Seq Scan"), "{texto}");
    let imoveis = sql::postgres_imoveis_por_codigos();
    for consulta in [imoveis.as_str(), sql::POSTGRES_DONOS_POR_CODIGOS] {
        let linhas: Vec<String> = sqlx::query_scalar(&plano(consulta))
            .bind(vec!["a".to_owned(), "b".to_owned()])
            .fetch_all(&mut *c)
            .await
            .unwrap();
        let texto = linhas.join("\n");
        assert!(texto.contains("Index"), "{consulta}:\n{texto}");
        assert!(!texto.contains("Seq Scan"), "{consulta}:\n{texto}");
    }
}
