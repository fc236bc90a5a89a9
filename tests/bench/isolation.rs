//! Figure 5: one account cannot stall the others. An account with 1,000,000 history rows
//! (inserted directly, as a year of traffic would leave them) hammers `GET /v1/historico` and
//! `GET /v1/uso` at its rate limit (10 requests/s, open loop: a slow answer does not slow the
//! attacker) with every filter combination, `busca` and deep pages included. Meanwhile other
//! accounts read `GET /v1/saldo` and make paid `GET /v1/proprietario/{doc}` lookups at their
//! own limit. Their p50/p99 while the attack runs are compared with the same load idle.
//! Target: p99 within 2x of idle. Before the attack, each history filter's page is timed
//! alone on that account (target: p50 <= 5 ms for any filter).
//!
//! ```sh
//! cargo bench -p carapi-tests --bench figures -- isolation
//! CARAPI_BENCH_LINHAS=200000 cargo bench -p carapi-tests --bench figures -- isolation
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use carapi_tests::Environment;
use hdrhistogram::Histogram;
use rust_decimal::Decimal;
use tokio::sync::Mutex;

use crate::Figura;

const DEFAULT_ROWS: i64 = 1_000_000;
const VITIMAS: usize = 4;
/// Requests per second of each victim (under the contract's 10/s).
const RITMO_VITIMA: u64 = 8;
const FASE: Duration = Duration::from_secs(20);
const OPENAPI_DOCUMENT: &str = "52998224725";

/// The attacker's requests, in turn.
const ATTACK_PATHS: [&str; 8] = [
    "/v1/historico?status=sucesso",
    "/v1/historico?status=erro&endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D",
    "/v1/historico?busca=4E2",
    "/v1/historico?page=49000&size=20",
    "/v1/historico?endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D%2Fcompleto&page=2000&size=100",
    "/v1/uso",
    "/v1/historico?busca=zz&status=erro",
    "/v1/historico",
];

/// Inserts `n` history rows for `conta` straight into the SQLite file.
async fn semear(url: &str, conta: i64, n: i64) {
    let pool = sqlx::SqlitePool::connect(url).await.expect("sqlite");
    let t0 = chrono::Utc::now().timestamp_millis() - n * 1000;
    sqlx::query(
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2),
         g AS (SELECT i, CASE i % 4 WHEN 0 THEN '/v1/car/{codigo}'
                    WHEN 1 THEN '/v1/car/{codigo}/completo' WHEN 2 THEN '/v1/car/{codigo}/recibo'
                    ELSE '/v1/proprietario/{cpf_cnpj}' END AS endpoint,
                    CASE WHEN i % 3 = 0 THEN 200 ELSE 404 END AS status FROM s)
         INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado,
             valor_centavos, ordem_conta, ordem_endpoint, ordem_status, ordem_endpoint_status)
         SELECT ?1, ?3 + i * 1000, endpoint, printf('DF-5300108-%032X', i), status, status = 200,
                CASE WHEN status = 200 THEN 100 ELSE 0 END, i,
                ROW_NUMBER() OVER (PARTITION BY endpoint ORDER BY i),
                ROW_NUMBER() OVER (PARTITION BY status = 200 ORDER BY i),
                ROW_NUMBER() OVER (PARTITION BY endpoint, status = 200 ORDER BY i)
         FROM g ORDER BY i",
    )
    .bind(conta)
    .bind(n)
    .bind(t0)
    .execute(&pool)
    .await
    .expect("seed history");
    pool.close().await;
}

/// Latencies of the victims' two kinds of request.
struct Medida {
    saldo: Histogram<u64>,
    proprietario: Histogram<u64>,
    faults: u64,
}

async fn vitimas(base: &str, keys: &[String]) -> Medida {
    let medida = Arc::new(Mutex::new(Medida {
        saldo: Histogram::new(3).expect("histogram"),
        proprietario: Histogram::new(3).expect("histogram"),
        faults: 0,
    }));
    let fim = Instant::now() + FASE;
    let tasks: Vec<_> = keys
        .iter()
        .map(|key| {
            let (key, base, medida) = (key.clone(), base.to_owned(), medida.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                let mut tick = tokio::time::interval(Duration::from_millis(1000 / RITMO_VITIMA));
                let mut n = 0u64;
                while Instant::now() < fim {
                    tick.tick().await;
                    n += 1;
                    let pago = n.is_multiple_of(2);
                    let url = if pago {
                        format!("{base}/v1/proprietario/{OPENAPI_DOCUMENT}")
                    } else {
                        format!("{base}/v1/saldo")
                    };
                    let t = Instant::now();
                    let ok = http
                        .get(&url)
                        .bearer_auth(&key)
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success());
                    let us = t.elapsed().as_micros() as u64;
                    let mut m = medida.lock().await;
                    if !ok {
                        m.faults += 1;
                    }
                    let h = if pago {
                        &mut m.proprietario
                    } else {
                        &mut m.saldo
                    };
                    h.record(us.max(1)).expect("record");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("victim");
    }
    Arc::try_unwrap(medida)
        .ok()
        .expect("sole owner")
        .into_inner()
}

/// The attacker: 10 requests/s, open loop, until `parar` is set; returns (sent, non-200).
fn atacar(
    base: String,
    key: String,
    parar: Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<(u64, u64)> {
    tokio::spawn(async move {
        let http = reqwest::Client::new();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut pendentes = Vec::new();
        let mut i = 0;
        while !parar.load(std::sync::atomic::Ordering::Relaxed) {
            tick.tick().await;
            let (http, url, key) = (
                http.clone(),
                format!("{base}{}", ATTACK_PATHS[i % ATTACK_PATHS.len()]),
                key.clone(),
            );
            pendentes.push(tokio::spawn(async move {
                http.get(url)
                    .bearer_auth(key)
                    .send()
                    .await
                    .map(|r| r.status().as_u16())
                    .unwrap_or(0)
            }));
            i += 1;
        }
        let mut ruins = 0;
        for p in &mut pendentes {
            if p.await.unwrap_or(0) != 200 {
                ruins += 1;
            }
        }
        (pendentes.len() as u64, ruins)
    })
}

/// Time of one history page for each of the attacker's `GET /v1/historico` filters over its
/// `linhas` rows, sequentially at 9 requests/s (under the key's limit): the slowest filter's
/// p50 against the 5 ms target.
async fn historico_pages(base: &str, key: &str, linhas: i64) -> Figura {
    const VEZES: usize = 9;
    let http = reqwest::Client::new();
    let mut p50s = Vec::new();
    for path in ATTACK_PATHS
        .iter()
        .filter(|p| p.starts_with("/v1/historico"))
    {
        let mut tempos = Vec::with_capacity(VEZES);
        for _ in 0..VEZES {
            let t = Instant::now();
            let r = http
                .get(format!("{base}{path}"))
                .bearer_auth(key)
                .send()
                .await
                .expect("history page");
            assert_eq!(r.status(), 200, "{path}");
            let _ = r.bytes().await;
            tempos.push(t.elapsed());
            tokio::time::sleep(Duration::from_millis(111)).await;
        }
        tempos.sort();
        p50s.push((tempos[VEZES / 2], *path));
    }
    p50s.sort();
    let (pior, pior_path) = p50s[p50s.len() - 1];
    let (melhor, _) = p50s[0];
    let pior_ms = pior.as_secs_f64() * 1000.0;
    Figura {
        nome: "history page of a 1M-row account, slowest filter p50",
        medido: format!("{pior_ms:.2} ms ({pior_path}, {linhas} rows)"),
        referencia: format!("{:.2} ms (fastest filter)", melhor.as_secs_f64() * 1000.0),
        ratio: pior_ms / 5.0,
        alvo: "<= 5 ms for any filter",
        ok: pior_ms <= 5.0,
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

pub async fn run() -> Vec<Figura> {
    let linhas: i64 = std::env::var("CARAPI_BENCH_LINHAS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_ROWS);
    let amb = Environment::new().await;
    let base = amb.server.base_url();
    let atacante = amb.conta(Decimal::from(10)).await;
    let t = Instant::now();
    semear(&amb.database_url, atacante.conta_id.0, linhas).await;
    eprintln!(
        "isolation: {linhas} history rows seeded in {:.1?}",
        t.elapsed()
    );
    let pagina = historico_pages(&base, &atacante.api_key, linhas).await;
    let mut keys = Vec::new();
    for _ in 0..VITIMAS {
        keys.push(amb.conta(Decimal::from(100_000)).await.api_key);
    }
    let ocioso = vitimas(&base, &keys).await;
    let parar = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ataque = atacar(base.clone(), atacante.api_key.clone(), parar.clone());
    let carregado = vitimas(&base, &keys).await;
    parar.store(true, std::sync::atomic::Ordering::Relaxed);
    let (enviados, ruins) = ataque.await.expect("attacker");
    eprintln!(
        "isolation: attacker sent {enviados} history/usage requests, {ruins} not 200; victims' failures idle {} / attacked {}",
        ocioso.faults, carregado.faults
    );
    let figura = |nome, o: &Histogram<u64>, c: &Histogram<u64>| {
        let ratio = c.value_at_quantile(0.99) as f64 / o.value_at_quantile(0.99).max(1) as f64;
        Figura {
            nome,
            medido: format!(
                "p50 {:.2} ms, p99 {:.2} ms (attacked, {linhas} rows)",
                ms(c.value_at_quantile(0.5)),
                ms(c.value_at_quantile(0.99))
            ),
            referencia: format!(
                "p50 {:.2} ms, p99 {:.2} ms (idle)",
                ms(o.value_at_quantile(0.5)),
                ms(o.value_at_quantile(0.99))
            ),
            ratio,
            alvo: "p99 <= 2x idle",
            ok: ratio <= 2.0 && carregado.faults == 0,
        }
    };
    vec![
        pagina,
        figura(
            "isolation: other account's GET /v1/saldo",
            &ocioso.saldo,
            &carregado.saldo,
        ),
        figura(
            "isolation: other account's paid GET /v1/proprietario",
            &ocioso.proprietario,
            &carregado.proprietario,
        ),
    ]
}
