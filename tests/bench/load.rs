//! A small closed-loop load client: `conexoes` tasks share one HTTP/1.1 connection pool and send
//! GET requests back to back for `duracao`, recording every latency in an HDR histogram.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// What one load run measured.
pub struct Resultado {
    pub por_segundo: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub falhas: u64,
}

/// Sends `GET url` with the bearer keys in round-robin from `conexoes` concurrent tasks.
pub async fn gerar(
    url: &str,
    chaves: Arc<Vec<String>>,
    conexoes: usize,
    duracao: Duration,
) -> Resultado {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(conexoes)
        .build()
        .expect("client");
    let proxima = Arc::new(AtomicUsize::new(0));
    let inicio = Instant::now();
    let fim = inicio + duracao;
    let tarefas: Vec<_> = (0..conexoes)
        .map(|_| {
            let (http, url, chaves, proxima) = (
                http.clone(),
                url.to_owned(),
                chaves.clone(),
                proxima.clone(),
            );
            tokio::spawn(async move {
                let mut hist = Histogram::<u64>::new(3).expect("histogram");
                let mut falhas = 0u64;
                while Instant::now() < fim {
                    let chave = &chaves[proxima.fetch_add(1, Ordering::Relaxed) % chaves.len()];
                    let t = Instant::now();
                    let ok = match http.get(&url).bearer_auth(chave).send().await {
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
        let (h, f) = t.await.expect("load task");
        total.add(h).expect("same histogram bounds");
        falhas += f;
    }
    let segundos = inicio.elapsed().as_secs_f64();
    Resultado {
        por_segundo: total.len() as f64 / segundos,
        p50: Duration::from_micros(total.value_at_quantile(0.50)),
        p99: Duration::from_micros(total.value_at_quantile(0.99)),
        falhas,
    }
}
