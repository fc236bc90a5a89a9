//! Figure 4: 200 charged lookups through the SDK with its default limiter (10 requests/s, the
//! contract's per-key limit) against the server's own limiter: achieved rate / 10, and how many
//! 429s the server sent (counted from the SDK's per-response tracing events, retries included).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use carapi_tests::Environment;
use futures::{StreamExt, stream};
use rust_decimal::Decimal;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

use crate::Figure;

const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
const CONSULTAS: usize = 200;

pub async fn run() -> Figure {
    let counter = Arc::new(AtomicU64::new(0));
    let subscriber = tracing_subscriber::registry().with(Conta429(counter.clone()));
    // Global: the SDK's requests run on the runtime's worker threads.
    tracing::subscriber::set_global_default(subscriber).expect("no other subscriber in the bench");

    let env = Environment::new().await;
    let conta = env.conta(Decimal::from(1_000)).await;
    let client = env.client_addr(&conta.api_key);

    let start = Instant::now();
    let ok = stream::iter(0..CONSULTAS)
        .map(|_| {
            let c = client.clone();
            async move { c.car(CODIGO).await.is_ok() }
        })
        .buffer_unordered(16)
        .filter(|ok| std::future::ready(*ok))
        .count()
        .await;
    let seconds = start.elapsed().as_secs_f64();
    let rate = ok as f64 / seconds;
    let n429 = counter.load(Ordering::Relaxed);
    let ratio = rate / 10.0;
    Figure {
        name: "batch: 200 lookups at the SDK's default limit",
        measured: format!("{rate:.2}/s, {ok} ok, {n429} × 429"),
        reference: "10/s".into(),
        ratio,
        target: ">= 0.97, no 429",
        ok: ratio >= 0.97 && n429 == 0 && ok == CONSULTAS,
    }
}

/// Counts `carapi_sdk::http` events whose `status` field is 429.
struct Conta429(Arc<AtomicU64>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Conta429 {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        struct Status(Option<u64>);
        impl Visit for Status {
            fn record_u64(&mut self, f: &Field, v: u64) {
                if f.name() == "status" {
                    self.0 = Some(v);
                }
            }
            fn record_i64(&mut self, f: &Field, v: i64) {
                if f.name() == "status" {
                    self.0 = u64::try_from(v).ok();
                }
            }
            fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
                if f.name() == "status" {
                    self.0 = format!("{v:?}").trim_matches('"').parse().ok();
                }
            }
        }
        if event.metadata().target() == "carapi_sdk::http" {
            let mut s = Status(None);
            event.record(&mut s);
            if s.0 == Some(429) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
