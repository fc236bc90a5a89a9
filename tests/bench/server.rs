//! Figure 1: charged basic lookups per second on the reference server, spread over 1,000 funded
//! keys, against a bare axum handler that returns a fixed JSON body of the same size.

use std::sync::Arc;
use std::time::Duration;

use axum::{Router, http::header, routing::get};
use carapi_tests::Ambiente;
use rust_decimal::Decimal;

use crate::{Figura, load};

const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
const CHAVES: usize = 1_000;
const CONEXOES: usize = 32;
const DURACAO: Duration = Duration::from_secs(5);

pub async fn run() -> Figura {
    let amb = Ambiente::novo().await;
    let mut chaves = Vec::with_capacity(CHAVES);
    for _ in 0..CHAVES {
        chaves.push(amb.conta(Decimal::from(100_000)).await.api_key);
    }
    let chaves = Arc::new(chaves);
    let url = format!("{}/v1/car/{CODIGO}", amb.server.base_url());

    // The bare handler answers with a real response body, byte for byte.
    let corpo = reqwest::Client::new()
        .get(&url)
        .bearer_auth(&chaves[0])
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .expect("a charged lookup succeeds")
        .bytes()
        .await
        .expect("body");
    let app = Router::new().route(
        "/v1/car/{codigo}",
        get(move || {
            let corpo = corpo.clone();
            async move { ([(header::CONTENT_TYPE, "application/json")], corpo) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let bare_url = format!(
        "http://{}/v1/car/{CODIGO}",
        listener.local_addr().expect("addr")
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    // Warm both, then measure side by side.
    load::gerar(
        &bare_url,
        chaves.clone(),
        CONEXOES,
        Duration::from_millis(500),
    )
    .await;
    load::gerar(&url, chaves.clone(), CONEXOES, Duration::from_millis(500)).await;
    let bare = load::gerar(&bare_url, chaves.clone(), CONEXOES, DURACAO).await;
    let real = load::gerar(&url, chaves.clone(), CONEXOES, DURACAO).await;
    eprintln!(
        "server: {:.0} lookups/s (p50 {:?}, p99 {:?}, {} failed) vs bare {:.0} req/s (p50 {:?}, p99 {:?})",
        real.por_segundo, real.p50, real.p99, real.falhas, bare.por_segundo, bare.p50, bare.p99
    );
    let razao = real.por_segundo / bare.por_segundo;
    Figura {
        nome: "server: charged lookups/s vs bare axum",
        medido: format!(
            "{:.0}/s, p50 {:.1} ms, p99 {:.1} ms",
            real.por_segundo,
            ms(real.p50),
            ms(real.p99)
        ),
        referencia: format!(
            "{:.0}/s, p50 {:.1} ms, p99 {:.1} ms",
            bare.por_segundo,
            ms(bare.p50),
            ms(bare.p99)
        ),
        razao,
        alvo: ">= 0.25",
        ok: razao >= 0.25 && real.falhas == 0,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
