//! Figure 3: time per SDK call against a raw reqwest call to the same server and endpoint
//! (sequential calls, alternating blocks, the SDK's limiter off so that only overhead is measured).

use std::time::{Duration, Instant};

use carapi_sdk::sandbox;
use carapi_tests::Environment;
use rust_decimal::Decimal;

use crate::Figure;

const BLOCKS: usize = 10;
const PER_BLOCK: usize = 200;

pub async fn run() -> Figure {
    let env = Environment::com(|c| c.rate_limit = None).await;
    let chave = env.conta(Decimal::from(10)).await.api_key;
    let sdk = env
        .builder(&chave)
        .rate_limit(None)
        .build()
        .expect("client");
    let raw = reqwest::Client::new();
    let url = format!("{}/v1/car/{}", env.server.base_url(), sandbox::CAR_BASICO);

    let (mut t_sdk, mut t_raw) = (Duration::ZERO, Duration::ZERO);
    for block in 0..=BLOCKS {
        let t = Instant::now();
        for _ in 0..PER_BLOCK {
            sdk.car(sandbox::CAR_BASICO).await.expect("sdk call");
        }
        let a = t.elapsed();
        let t = Instant::now();
        for _ in 0..PER_BLOCK {
            let r = raw
                .get(&url)
                .bearer_auth(&chave)
                .send()
                .await
                .expect("raw call");
            let v: serde_json::Value = r
                .error_for_status()
                .expect("200")
                .json()
                .await
                .expect("json");
            std::hint::black_box(v);
        }
        let b = t.elapsed();
        if block > 0 {
            t_sdk += a;
            t_raw += b;
        }
    }
    let n = (BLOCKS * PER_BLOCK) as f64;
    let (sdk_us, raw_us) = (t_sdk.as_secs_f64() * 1e6 / n, t_raw.as_secs_f64() * 1e6 / n);
    let ratio = sdk_us / raw_us;
    Figure {
        name: "SDK: time per call vs raw reqwest",
        measured: format!("{sdk_us:.0} µs"),
        reference: format!("{raw_us:.0} µs"),
        ratio,
        target: "<= 1.05",
        ok: ratio <= 1.05,
    }
}
