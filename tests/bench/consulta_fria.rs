//! Scale figures of the lookups (SQLite store, per-key limiter off):
//!
//! - cold lookups: charged `GET /v1/car/{code}` of distinct codes, each looked up once (so the
//!   server's record cache never answers), from 8 connections, over a 10k base and over a large
//!   base (1M records; `CARAPI_BENCH_GRANDE=N` changes it); p50/p99 of each and the ratio of the
//!   p50s (targets: ratio <= 1.2, p99 <= 10 ms);
//! - `GET /v1/proprietario/{doc}` for an owner of 10,000 CARs (200 returned, `truncado`): p50
//!   over sequential calls (target <= 5 ms).
//!
//! Filter word: `fria` (`cargo bench -p carapi-tests --bench figures -- fria`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use carapi_server::carga::{Origem, carregar};
use carapi_server::dados::{Imovel, Proprietario, sinteticos};
use carapi_tests::Ambiente;
use hdrhistogram::Histogram;
use rust_decimal::Decimal;

use crate::Figura;

const PEQUENA: usize = 10_000;
const GRANDE: usize = 1_000_000;
const AMOSTRA: usize = 2_000;
const CONEXOES: usize = 8;
const DONO_CARS: usize = 10_000;

/// A server over `n` synthetic records, bulk-loaded as `seed --synthetic N` loads them (so a
/// 7.5M base takes minutes, not hours), and `AMOSTRA` of their codes spread over the whole
/// base.
async fn base(n: usize) -> (Ambiente, Vec<String>) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let origem = Origem::Sinteticos {
        n,
        seed: 1,
        dono_grande: None,
    };
    carregar(&url, origem, false).await.expect("bulk load");
    let amostra = amostra(&url, n).await;
    let amb = Ambiente::em(dir, |c| {
        c.rate_limit = None;
        c.load_bundled_data = false;
    })
    .await;
    (amb, amostra)
}

/// `AMOSTRA` codes of the base at `url`, one every `n / AMOSTRA` rows of the table (which a
/// bulk load writes in code order: the sample spans the key space).
async fn amostra(url: &str, n: usize) -> Vec<String> {
    let pool = sqlx::SqlitePool::connect(url).await.expect("sqlite");
    let passo = (n / AMOSTRA).max(1) as i64;
    let v = sqlx::query_scalar("SELECT codigo_car FROM imoveis WHERE rowid % ?1 = 0 LIMIT ?2")
        .bind(passo)
        .bind(AMOSTRA as i64)
        .fetch_all(&pool)
        .await
        .expect("sample");
    pool.close().await;
    v
}

/// Each code of `codigos` looked up once from `CONEXOES` tasks: (p50, p99, failures).
async fn frias(amb: &Ambiente, codigos: Vec<String>) -> (Duration, Duration, usize) {
    let chave = amb.conta(Decimal::from(1_000_000)).await.api_key;
    let http = reqwest::Client::new();
    let base = amb.server.base_url();
    let (codigos, proximo) = (Arc::new(codigos), Arc::new(AtomicUsize::new(0)));
    let tarefas: Vec<_> = (0..CONEXOES)
        .map(|_| {
            let (http, base, chave) = (http.clone(), base.clone(), chave.clone());
            let (codigos, proximo) = (codigos.clone(), proximo.clone());
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3).expect("histogram");
                let mut falhas = 0;
                while let Some(c) = codigos.get(proximo.fetch_add(1, Ordering::Relaxed)) {
                    let t = Instant::now();
                    let r = http
                        .get(format!("{base}/v1/car/{c}"))
                        .bearer_auth(&chave)
                        .send()
                        .await;
                    let ok = match r {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    if ok {
                        hist.record(t.elapsed().as_micros() as u64).ok();
                    } else {
                        falhas += 1;
                    }
                }
                (hist, falhas)
            })
        })
        .collect();
    let mut total = Histogram::<u64>::new(3).expect("histogram");
    let mut falhas = 0;
    for t in tarefas {
        let (h, f) = t.await.expect("task");
        total.add(h).expect("same bounds");
        falhas += f;
    }
    let q = |x| Duration::from_micros(total.value_at_quantile(x));
    (q(0.50), q(0.99), falhas)
}

/// `DONO_CARS` copies of one synthetic record with distinct codes, all owned by one CNPJ.
fn copias_de_um_dono() -> (String, Vec<Imovel>) {
    let modelo = sinteticos(1, 7).remove(0);
    let dono = Proprietario {
        documento: carapi_sdk::CpfCnpj::from_base("DONODEZMIL1A").expect("CNPJ"),
        nome: "Dono de Dez Mil Exemplo".into(),
    };
    let copias = (0..DONO_CARS)
        .map(|i| {
            let mut im = modelo.clone();
            im.codigo_car = format!("DF-5300108-{:032X}", 0xD000_0000_u64 + i as u64)
                .parse()
                .expect("code");
            im.proprietarios = vec![dono.clone()];
            im
        })
        .collect();
    (dono.documento.as_str().to_owned(), copias)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

async fn proprietario(amb: &Ambiente) -> Figura {
    let (doc, copias) = copias_de_um_dono();
    amb.server
        .store()
        .gravar_imoveis(&copias)
        .await
        .expect("write");
    let chave = amb.conta(Decimal::from(1_000_000)).await.api_key;
    let http = reqwest::Client::new();
    let url = format!("{}/v1/proprietario/{doc}", amb.server.base_url());
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    for i in 0..60 {
        let t = Instant::now();
        let r = http
            .get(&url)
            .bearer_auth(&chave)
            .send()
            .await
            .expect("send");
        let v: serde_json::Value = r.json().await.expect("json");
        assert_eq!(v["truncado"], true, "{v}");
        if i >= 10 {
            hist.record(t.elapsed().as_micros() as u64).ok();
        }
    }
    let p50 = Duration::from_micros(hist.value_at_quantile(0.5));
    Figura {
        nome: "owner of 10,000 CARs (200 + truncado), p50",
        medido: ms(p50),
        referencia: format!(
            "p99 {}",
            ms(Duration::from_micros(hist.value_at_quantile(0.99)))
        ),
        razao: p50.as_secs_f64() * 1000.0 / 5.0,
        alvo: "<= 5 ms",
        ok: p50 <= Duration::from_millis(5),
    }
}

pub async fn run() -> Vec<Figura> {
    let grande = std::env::var("CARAPI_BENCH_GRANDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(GRANDE);
    let (amb, codigos) = base(PEQUENA).await;
    let (p50_p, p99_p, f_p) = frias(&amb, codigos).await;
    let dono = proprietario(&amb).await;
    drop(amb);
    let inicio = Instant::now();
    let (amb, codigos) = base(grande).await;
    eprintln!("fria: {grande} records written in {:.1?}", inicio.elapsed());
    let (p50_g, p99_g, f_g) = frias(&amb, codigos).await;
    let razao = p50_g.as_secs_f64() / p50_p.as_secs_f64().max(1e-9);
    vec![
        Figura {
            nome: "cold lookup p50, large base / 10k base",
            medido: format!("{} ({grande}; p99 {}; {f_g} failed)", ms(p50_g), ms(p99_g)),
            referencia: format!("{} (10k; p99 {}; {f_p} failed)", ms(p50_p), ms(p99_p)),
            razao,
            alvo: "<= 1.2, p99 <= 10 ms",
            ok: razao <= 1.2 && p99_g <= Duration::from_millis(10) && f_g + f_p == 0,
        },
        dono,
    ]
}
