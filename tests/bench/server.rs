//! Figure 1: charged basic lookups per second on the reference server, spread over 1,000 funded
//! keys, against a bare axum handler that returns a fixed JSON body of the same size.
//!
//! Two rows. The target row runs the server with its per-key rate limiter off: with the contract's
//! 10 requests/s per key, 1,000 keys cap successful lookups near 10,000/s (plus the burst), below
//! what the target asks of a fast machine, so with the limiter on the figure would measure the
//! limit, not the server. The limiter itself is tested in `carapi-server`'s and the e2e tests. The
//! second row keeps the limiter on, as deployed, and is printed for information.

use std::sync::Arc;
use std::time::Duration;

use axum::{Router, http::header, routing::get};
use carapi_tests::Environment;
use rust_decimal::Decimal;

use crate::{Figure, load};

const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
const KEYS: usize = 1_000;
const CONNECTIONS: usize = 32;
const DURATION: Duration = Duration::from_secs(5);

/// A server over 1,000 funded accounts, the lookup URL, and the keys.
async fn server(limiter: bool) -> (Environment, String, Arc<Vec<String>>) {
    let env = Environment::com(|c| {
        if !limiter {
            c.rate_limit = None;
        }
    })
    .await;
    let mut keys = Vec::with_capacity(KEYS);
    for _ in 0..KEYS {
        keys.push(env.conta(Decimal::from(100_000)).await.api_key);
    }
    let url = format!("{}/v1/car/{CODIGO}", env.server.base_url());
    (env, url, Arc::new(keys))
}

/// A bare axum handler answering `corpo` byte for byte; returns its URL.
async fn bare(body: axum::body::Bytes) -> String {
    let app = Router::new().route(
        "/v1/car/{codigo}",
        get(move || {
            let body = body.clone();
            async move { ([(header::CONTENT_TYPE, "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/v1/car/{CODIGO}",
        listener.local_addr().expect("addr")
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A server in a runtime of its own whose threads log through `filtro` to `arquivo` as JSON
/// (the binary's format).
async fn logged_server(
    filter: &str,
    file: &tempfile::NamedTempFile,
) -> (
    tokio::runtime::Runtime,
    Environment,
    String,
    Arc<Vec<String>>,
) {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::layer::SubscriberExt;
    let write = file.reopen().expect("log file");
    let sub = tracing_subscriber::registry()
        .with(EnvFilter::new(filter))
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .with_writer(std::sync::Mutex::new(write)),
        );
    let d = tracing::Dispatch::new(sub);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(move || std::mem::forget(tracing::dispatcher::set_default(&d)))
        .build()
        .expect("runtime");
    let (env, url, keys) = rt.spawn(server(false)).await.expect("server");
    (rt, env, url, keys)
}

/// The access log's cost: two servers, each in a runtime of its own whose threads log to a
/// JSON file, one with `carapi::access` off and one with it on (a fixed subscriber each, so
/// no filter reload is involved), measured alternately, twice each.
async fn access_log_figure() -> Figure {
    const OFF: &str = "info,carapi::acesso=off,carapi::pedido=off";
    let (f_off, f_on) = (
        tempfile::NamedTempFile::new().expect("log file"),
        tempfile::NamedTempFile::new().expect("log file"),
    );
    let (rt_off, env_off, url_off, keys_off) = logged_server(OFF, &f_off).await;
    let (rt_on, env_on, url_on, keys_on) = logged_server("info", &f_on).await;
    let warm_up = Duration::from_millis(500);
    load::generate(&url_off, keys_off.clone(), CONNECTIONS, warm_up).await;
    load::generate(&url_on, keys_on.clone(), CONNECTIONS, warm_up).await;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        off.push(load::generate(&url_off, keys_off.clone(), CONNECTIONS, DURATION).await);
        on.push(load::generate(&url_on, keys_on.clone(), CONNECTIONS, DURATION).await);
    }
    drop((env_off, env_on));
    rt_off.shutdown_background();
    rt_on.shutdown_background();
    let media = |v: &[load::LoadResult]| v.iter().map(|r| r.per_second).sum::<f64>() / 2.0;
    let (m_on, m_off) = (media(&on), media(&off));
    let count = |f: &tempfile::NamedTempFile| {
        std::fs::read_to_string(f.path()).map_or(0, |t| {
            t.lines().filter(|l| l.contains("carapi::acesso")).count()
        })
    };
    let (lines, lines_off) = (count(&f_on), count(&f_off));
    eprintln!("access log on: {m_on:.0}/s ({lines} access lines), off: {m_off:.0}/s ({lines_off})");
    let ratio = m_on / m_off;
    Figure {
        name: "server, access log on (JSON to a file) vs off",
        measured: format!("{m_on:.0}/s, {lines} lines"),
        reference: format!("{m_off:.0}/s"),
        ratio,
        target: ">= 0.90",
        ok: ratio >= 0.90 && lines > 0 && lines_off == 0,
    }
}

pub async fn run() -> Vec<Figure> {
    let (_env, url, keys) = server(false).await;
    let body = reqwest::Client::new()
        .get(&url)
        .bearer_auth(&keys[0])
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("a charged lookup succeeds")
        .bytes()
        .await
        .expect("body");
    let bare_url = bare(body).await;

    // Warm both, then measure side by side.
    load::generate(
        &bare_url,
        keys.clone(),
        CONNECTIONS,
        Duration::from_millis(500),
    )
    .await;
    load::generate(&url, keys.clone(), CONNECTIONS, Duration::from_millis(500)).await;
    let base = load::generate(&bare_url, keys.clone(), CONNECTIONS, DURATION).await;
    let real = load::generate(&url, keys.clone(), CONNECTIONS, DURATION).await;
    drop(_env);

    let (_env, url, keys) = server(true).await;
    load::generate(&url, keys.clone(), CONNECTIONS, Duration::from_millis(500)).await;
    let limited = load::generate(&url, keys.clone(), CONNECTIONS, DURATION).await;

    for (name, r) in [
        ("server", &real),
        ("server, limiter on", &limited),
        ("bare", &base),
    ] {
        eprintln!(
            "{name}: {:.0}/s (p50 {:?}, p99 {:?}, {} not 200)",
            r.per_second, r.p50, r.p99, r.faults
        );
    }
    let ratio = real.per_second / base.per_second;
    let ledger_limited = limited.per_second / base.per_second;
    let access = access_log_figure().await;
    vec![
        access,
        Figure {
            name: "server: charged lookups/s vs bare axum (1,000 keys)",
            measured: summary(&real),
            reference: summary(&base),
            ratio,
            target: ">= 0.25",
            ok: ratio >= 0.25 && real.faults == 0,
        },
        Figure {
            name: "server, per-key limiter on (info: ceiling 1,000 keys × 10/s)",
            measured: format!("{}, {} × 429", summary(&limited), limited.faults),
            reference: summary(&base),
            ratio: ledger_limited,
            target: "info",
            ok: true,
        },
    ]
}

fn summary(r: &load::LoadResult) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "{:.0}/s, p50 {:.1} ms, p99 {:.1} ms",
        r.per_second,
        ms(r.p50),
        ms(r.p99)
    )
}
