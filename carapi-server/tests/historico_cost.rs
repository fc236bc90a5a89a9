//! History and usage cost O(page) plus an index seek, for every filter combination, on both
//! stores: the plans use an index for each combination (never a scan of the account's
//! history), and the answers over a 20,000-row account are right (no timing asserted; the
//! 1M-row figure is the `isolation` benchmark in tests/bench).

use carapi_sdk::{EndpointConsulta, StatusConsulta};
use carapi_service::ContaId;
use carapi_service::store::{HistoricoFilter, PgStore, SEARCH_WINDOW, SqliteStore};
use serde_json::Value;

use crate::server::{DatabaseArgs, Server, databases};

const LINES: i64 = 20_000;
/// 2026-01-01T00:00:00Z in Unix milliseconds; row `i` is `i` seconds later.
const T0_MS: i64 = 1_767_225_600_000;

/// One synthetic history row, as [`semear`] writes it.
#[derive(Debug, Clone)]
struct Line {
    i: i64,
    endpoint: &'static str,
    chave: String,
    status: u16,
}

fn line(i: i64) -> Line {
    let endpoint = EndpointConsulta::ALL[(i % 4) as usize].as_str();
    Line {
        i,
        endpoint,
        chave: format!("DF-5300108-{i:032X}"),
        status: if i % 3 == 0 { 200 } else { 404 },
    }
}

/// The ordinal columns of a history row (src/store/historico.rs).
const ORDERS: &str = "ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status";
/// The ordinals of the rows of `g` (i, endpoint, status) of an account without history.
const WINDOWS: &str = "i, ROW_NUMBER() OVER (PARTITION BY endpoint ORDER BY i),
    ROW_NUMBER() OVER (PARTITION BY status = 200 ORDER BY i),
    ROW_NUMBER() OVER (PARTITION BY endpoint, status = 200 ORDER BY i)";

/// Inserts `n` rows for `conta`, an account without history, straight into the database (as
/// a year of traffic would), with their ordinals.
pub async fn seed(database: &DatabaseArgs, conta: ContaId, n: i64) {
    let endpoints = "CASE i % 4 WHEN 0 THEN '/v1/car/{codigo}' WHEN 1 THEN '/v1/car/{codigo}/completo' \
        WHEN 2 THEN '/v1/car/{codigo}/recibo' ELSE '/v1/proprietario/{cpf_cnpj}' END";
    if database.name == "sqlite" {
        let pool = sqlx::SqlitePool::connect(&database.url).await.unwrap();
        sqlx::query(&format!(
            "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2),
             g AS (SELECT i, {endpoints} AS endpoint,
                          CASE WHEN i % 3 = 0 THEN 200 ELSE 404 END AS status FROM s)
             INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado,
                 valor_centavos, {ORDERS})
             SELECT ?1, ?3 + i * 1000, endpoint, printf('DF-5300108-%032X', i), status,
                    status = 200, CASE WHEN status = 200 THEN 100 ELSE 0 END, {WINDOWS}
             FROM g ORDER BY i"
        ))
        .bind(conta.0)
        .bind(n)
        .bind(T0_MS)
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;
    } else {
        let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
        sqlx::query(&format!(
            "WITH g AS (SELECT i, {endpoints} AS endpoint,
                               CASE WHEN i % 3 = 0 THEN 200 ELSE 404 END AS status
                        FROM generate_series(1, $2::bigint) AS s(i))
             INSERT INTO consultas (conta_id, data, endpoint, chave, status_http, cobrado,
                 valor_centavos, {ORDERS})
             SELECT $1, to_timestamp(($3 + i * 1000) / 1000.0), endpoint,
                    'DF-5300108-' || lpad(upper(to_hex(i)), 32, '0'), status, status = 200,
                    CASE WHEN status = 200 THEN 100 ELSE 0 END, {WINDOWS}
             FROM g ORDER BY i"
        ))
        .bind(conta.0)
        .bind(n)
        .bind(T0_MS)
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("ANALYZE consultas")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    }
}

/// Every filter combination: endpoint (none or one of 4) x status (none, sucesso, erro) x
/// busca (none, a key substring, an endpoint substring, and `_` and `%`, which are text to
/// find, not patterns).
fn filters() -> Vec<HistoricoFilter> {
    let mut v = Vec::new();
    for endpoint in std::iter::once(None).chain(EndpointConsulta::ALL.map(Some)) {
        for status in [
            None,
            Some(StatusConsulta::Sucesso),
            Some(StatusConsulta::Erro),
        ] {
            for busca in [None, Some("4e2"), Some("COMPLETO"), Some("_"), Some("%")] {
                v.push(HistoricoFilter {
                    busca: busca.map(str::to_owned),
                    endpoint,
                    status,
                    page: 3,
                    size: 7,
                });
            }
        }
    }
    v
}

fn query(f: &HistoricoFilter) -> String {
    let mut q = format!("?page={}&size={}", f.page, f.size);
    if let Some(e) = f.endpoint {
        q.push_str(&format!(
            "&endpoint={}",
            e.as_str().replace('{', "%7B").replace('}', "%7D")
        ));
    }
    match f.status {
        Some(StatusConsulta::Sucesso) => q.push_str("&status=sucesso"),
        Some(StatusConsulta::Erro) => q.push_str("&status=erro"),
        None => {}
    }
    if let Some(b) = &f.busca {
        q.push_str(&format!("&busca={}", b.replace('%', "%25")));
    }
    q
}

/// What the store must answer: the rows matching the endpoint and status filters, newest first;
/// with `busca`, among the newest [`SEARCH_WINDOW`] of those, the ones whose key or endpoint
/// contains it (case-insensitive).
fn expected(f: &HistoricoFilter) -> Vec<Line> {
    let base = (1..=LINES).rev().map(line).filter(|l| {
        f.endpoint.is_none_or(|e| e.as_str() == l.endpoint)
            && match f.status {
                Some(StatusConsulta::Sucesso) => l.status == 200,
                Some(StatusConsulta::Erro) => l.status != 200,
                None => true,
            }
    });
    match &f.busca {
        None => base.collect(),
        Some(b) => {
            let b = b.to_uppercase();
            base.take(SEARCH_WINDOW as usize)
                .filter(|l| l.chave.contains(&b) || l.endpoint.to_uppercase().contains(&b))
                .collect()
        }
    }
}

/// A server over `database` that keeps every row: the synthetic rows are dated 2026-01-01, and
/// the retention of uncharged errors (on the system clock) would delete the old errors.
async fn without_retencao(database: &DatabaseArgs) -> Server {
    Server::com(database, |c| c.error_retention_days = None, |p| p).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_history_filter_is_answered_from_an_index_on_a_20k_row_account() {
    for database in
        databases("every_history_filter_is_answered_from_an_index_on_a_20k_row_account").await
    {
        let s = without_retencao(&database).await;
        let another = s.conta(10).await;
        let c = s.conta(10).await;
        seed(&database, another.conta_id, 300).await;
        seed(&database, c.conta_id, LINES).await;
        for base in filters() {
            let expected = expected(&base);
            // page 3, the last page (partial unless the total divides), one past it
            let last = expected.len().div_ceil(7).max(1) as u32;
            for page in [3, last, last + 1] {
                let f = HistoricoFilter {
                    page,
                    ..base.clone()
                };
                check_page(&s, &c.api_key, &f, &expected).await;
            }
        }
        let (_, uso) = s.get(&c.api_key, "/v1/uso").await;
        // the synthetic rows are from 2026-01-01 (outside the 30 days unless today is close)
        assert!(uso["itens"].is_array(), "{uso}");
        assert_plans(&database, c.conta_id).await;
    }
}

/// `GET /v1/historico` for `f` answers `esperado`'s total and its page `f.page` of 7.
async fn check_page(s: &Server, key: &str, f: &HistoricoFilter, expected: &[Line]) {
    let (st, v) = s.get(key, &format!("/v1/historico{}", query(f))).await;
    assert_eq!(st, 200, "{} {f:?}: {v}", s.name);
    assert_eq!(v["total"], expected.len(), "{} {f:?}", s.name);
    let skipped = (f.page as usize - 1) * f.size as usize;
    let page: Vec<&Line> = expected.iter().skip(skipped).take(7).collect();
    let itens = v["itens"].as_array().unwrap();
    let keys: Vec<&str> = itens
        .iter()
        .map(|i| i["chaveConsulta"].as_str().unwrap())
        .collect();
    let wants: Vec<&str> = page.iter().map(|l| l.chave.as_str()).collect();
    assert_eq!(keys, wants, "{} {f:?}", s.name);
    for (item, l) in itens.iter().zip(&page) {
        assert_eq!(
            (item["endpoint"].as_str(), item["statusHttp"].as_u64()),
            (Some(l.endpoint), Some(u64::from(l.status))),
            "{} row {}",
            s.name,
            l.i
        );
    }
}

async fn assert_plans(database: &DatabaseArgs, conta: ContaId) {
    let plans = if database.name == "sqlite" {
        let store = SqliteStore::connect(&database.url).await.unwrap();
        let mut v = Vec::new();
        for f in filters() {
            v.push((
                format!("{f:?}"),
                store.historico_plan(conta, &f).await.unwrap(),
            ));
        }
        v.push((
            "uso".into(),
            store.uso_plan(conta, chrono::Utc::now()).await.unwrap(),
        ));
        v
    } else {
        let store = PgStore::connect(&database.url).await.unwrap();
        let mut v = Vec::new();
        for f in filters() {
            v.push((
                format!("{f:?}"),
                store.historico_plan(conta, &f).await.unwrap(),
            ));
        }
        v.push((
            "uso".into(),
            store.uso_plan(conta, chrono::Utc::now()).await.unwrap(),
        ));
        v
    };
    for (name, plan) in plans {
        let text = plan.join("\n");
        assert!(!text.is_empty(), "{name}");
        // no full scan of the history (SQLite names the page's rows `c`); the page's ids come
        // from an index in page order (no sort of the account's rows). Usage may group the
        // rows of its one boundary hour; PostgreSQL may sort the page (at most 100 rows) or
        // the bounded `busca` window after the join.
        let mut banned = vec!["SCAN consultas", "SCAN c\n", "Seq Scan on consultas"];
        if name != "uso" {
            banned.push("TEMP B-TREE");
        }
        let text_n = format!("{text}\n");
        for forbidden in banned {
            assert!(
                !text_n.contains(forbidden),
                "{}: {name}: full scan or sort:\n{text}",
                database.name
            );
        }
        assert!(
            text.contains("INDEX") || text.contains("Index"),
            "{}: {name}: no index:\n{text}",
            database.name
        );
        // a page without `busca` is a range of the combination's ordinals, not an OFFSET
        // that steps over every newer row
        if name != "uso" && !name.contains("busca: Some") {
            assert!(
                text.contains("ordem_") && !text.contains("OFFSET"),
                "{}: {name}: page not read as an ordinal range:\n{text}",
                database.name
            );
        }
    }
}

/// `GET /v1/uso` sums the hourly counters and the rows of the boundary hour: the same answer
/// as counting the rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_over_30_days_counts_every_row_once() {
    for database in databases("usage_over_30_days_counts_every_row_once").await {
        let s = without_retencao(&database).await;
        let c = s.conta(100).await;
        for path in [
            "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
            "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
            "/v1/car/INVALIDO",
            "/v1/proprietario/52998224725",
        ] {
            s.get(&c.api_key, path).await;
        }
        let (_, uso) = s.get(&c.api_key, "/v1/uso").await;
        let itens: Vec<(String, u64, f64)> = uso["itens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i: &Value| {
                (
                    i["endpoint"].as_str().unwrap().to_owned(),
                    i["quantidade"].as_u64().unwrap(),
                    i["valorTotal"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            itens.iter().map(|i| i.1).sum::<u64>(),
            4,
            "{}: {uso}",
            s.name
        );
        assert_eq!(itens[0].0, "/v1/car/{codigo}", "{}: {uso}", s.name);
        assert_eq!(itens[0].1, 3, "{}: {uso}", s.name);
        let (_, h) = s.get(&c.api_key, "/v1/historico").await;
        assert_eq!(h["total"], 4, "{}", s.name);
    }
}

/// The window of `GET /v1/uso` starts mid-hour: whole hours come from the counters, the
/// boundary hour from its rows; every row at or after `desde` is counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_window_starting_mid_hour_is_exact() {
    for database in databases("usage_window_starting_mid_hour_is_exact").await {
        let s = without_retencao(&database).await;
        let c = s.conta(0).await;
        seed(&database, c.conta_id, 9_000).await;
        let store = s.server.store().clone();
        for since_s in [0.0, 1_800.5, 3_600.0, 5_000.0, 8_999.0, 9_000.5] {
            let since =
                chrono::DateTime::from_timestamp_millis(T0_MS + (since_s * 1000.0) as i64).unwrap();
            let uso = store.uso_by_endpoint(c.conta_id, since).await.unwrap();
            let lines: Vec<Line> = (1..=9_000)
                .filter(|i| (*i as f64) >= since_s)
                .map(line)
                .collect();
            for e in EndpointConsulta::ALL {
                let n = lines.iter().filter(|l| l.endpoint == e.as_str()).count() as u64;
                let valor = 100
                    * lines
                        .iter()
                        .filter(|l| l.endpoint == e.as_str() && l.status == 200)
                        .count() as i64;
                let found = uso.iter().find(|u| u.endpoint == e.as_str());
                assert_eq!(
                    found.map(|u| (u.quantidade, u.valor_total.get())),
                    (n > 0).then_some((n, valor)),
                    "{} desde {since_s}: {e:?}",
                    s.name
                );
            }
        }
    }
}

/// The test-sized version of the `isolation` benchmark (tests/bench): while a 20,000-row
/// account sends every kind of history and usage request (deep pages and `busca` included),
/// another account's balance reads and paid lookups are all answered, and both ledgers hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hammering_history_leaves_other_accounts_served() {
    const ATTACK: [&str; 8] = [
        "/v1/historico?status=sucesso",
        "/v1/historico?status=erro&endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D",
        "/v1/historico?busca=4E2",
        "/v1/historico?page=900&size=20",
        "/v1/historico?endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D%2Fcompleto&page=40&size=100",
        "/v1/uso",
        "/v1/historico?busca=zz&status=erro",
        "/v1/historico?page=4503599627370496",
    ];
    for database in databases("hammering_history_leaves_other_accounts_served").await {
        let s = std::sync::Arc::new(without_retencao(&database).await);
        let attacker = s.conta(0).await;
        let victim = s.conta(100).await;
        seed(&database, attacker.conta_id, LINES).await;
        let assault: Vec<_> = (0..40)
            .map(|i| {
                let (s, key) = (s.clone(), attacker.api_key.clone());
                tokio::spawn(async move { s.get(&key, ATTACK[i % ATTACK.len()]).await.0 })
            })
            .collect();
        for i in 0..30 {
            let path = if i % 3 == 0 {
                "/v1/proprietario/52998224725"
            } else {
                "/v1/saldo"
            };
            let (st, v) = s.get(&victim.api_key, path).await;
            assert_eq!(st, 200, "{} {path}: {v}", s.name);
        }
        for t in assault {
            let st = t.await.unwrap();
            assert!(st == 200 || st == 400, "{}: {st}", s.name);
        }
        s.ledger_ok(&victim).await;
        let (_, h) = s.get(&victim.api_key, "/v1/historico").await;
        assert_eq!(h["total"], 10, "{}", s.name);
    }
}

/// Each group's ordinals of `conta` are exactly 1..n (dense, no duplicates): the group's
/// count of rows, of distinct ordinals and its largest ordinal agree.
async fn dense_ordinals(database: &DatabaseArgs, conta: ContaId) {
    let groups = [
        ("ordem_conta", "conta_id"),
        ("ordem_endpoint", "endpoint"),
        ("ordem_status", "status_http = 200"),
        ("ordem_endpoint_status", "endpoint, status_http = 200"),
    ];
    for (column, group) in groups {
        let sql = format!(
            "SELECT COUNT(*) FROM (SELECT COUNT(*) AS n, COUNT(DISTINCT {column}) AS d,
                 MAX({column}) AS m FROM consultas WHERE conta_id = {} GROUP BY {group}) AS g
             WHERE n <> d OR n <> m",
            conta.0
        );
        let bad_ones: i64 = if database.name == "sqlite" {
            let pool = sqlx::SqlitePool::connect(&database.url).await.unwrap();
            sqlx::query_scalar(&sql).fetch_one(&pool).await.unwrap()
        } else {
            let pool = sqlx::PgPool::connect(&database.url).await.unwrap();
            sqlx::query_scalar(&sql).fetch_one(&pool).await.unwrap()
        };
        assert_eq!(bad_ones, 0, "{}: {column} not dense", database.name);
    }
}

/// Lookups of one account at once (charged ones, 404s, owner lookups) still get dense
/// ordinals, so that no page repeats or skips a request: on PostgreSQL the uncharged record
/// locks the account row like a charge does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_lookups_of_one_account_get_dense_ordinals() {
    for database in databases("concurrent_lookups_of_one_account_get_dense_ordinals").await {
        let s = without_retencao(&database).await;
        let c = s.conta(1000).await;
        let paths: Vec<String> = (0..48)
            .map(|i| match i % 3 {
                0 => "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47".to_owned(),
                1 => format!("/v1/car/DF-5300108-{i:032X}"),
                _ => "/v1/proprietario/52998224725".to_owned(),
            })
            .collect();
        let requests = paths.iter().map(|p| s.get(&c.api_key, p));
        let responses = futures::future::join_all(requests).await;
        assert!(responses.iter().any(|(st, _)| *st == 200), "{}", s.name);
        assert!(responses.iter().any(|(st, _)| *st == 404), "{}", s.name);
        dense_ordinals(&database, c.conta_id).await;
        let (_, v) = s.get(&c.api_key, "/v1/historico?size=100").await;
        assert_eq!(v["total"], 48, "{}: {v}", s.name);
        assert_eq!(v["itens"].as_array().unwrap().len(), 48, "{}", s.name);
    }
}
