//! The team archive in PostgreSQL (cargo feature `archive-postgres`): processes on several
//! machines share one chain, and a key two of them look up at once is bought once. The pool's
//! size and wait are settings; a purchase holds a pooled connection only while its claim and
//! append last (the rate limiter's wait comes first), so a burst of many keys needs few.
//!
//! ```sh
//! CARAPI_BASE_URL=http://127.0.0.1:8080 CARAPI_API_KEY=... \
//!     CARAPI_ACERVO=postgres://usuario@banco:5432/equipe \
//!     cargo run -p carapi-examples --example acervo_postgres [CODIGO_CAR...]
//! ```

use std::time::Duration;

use carapi_sdk::archive::{Archive, ArchiveOptions, ArchivePolicy, Freshness, LegalBasis};
use carapi_sdk::{Client, Error};
use futures::StreamExt;

/// Two of the reference server's records, when no code is given.
const CODIGOS: [&str; 2] = [
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("CARAPI_ACERVO")
        .map_err(|_| "CARAPI_ACERVO: o endereço postgres:// do acervo da equipe")?;
    let codigos: Vec<String> = std::env::args().skip(1).collect();
    let codigos: Vec<String> = if codigos.is_empty() {
        CODIGOS.iter().map(|c| (*c).to_owned()).collect()
    } else {
        codigos
    };
    // Connecting blocks (a runtime thread of the archive's own does the work): off the runtime.
    let options = ArchiveOptions::default()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(10));
    let archive =
        tokio::task::spawn_blocking(move || Archive::connect_with(&url, &options)).await??;
    let policy = ArchivePolicy::new(
        "monitoramento socioambiental da carteira",
        LegalBasis::CreditProtection,
        Freshness::MaxAge(Duration::from_secs(7 * 24 * 3600)),
    );
    let client = Client::builder().archive(archive.clone(), policy).build()?;

    // Every code three times at once: one purchase per code, the others wait and read it.
    let lookups = codigos
        .iter()
        .flat_map(|c| [c.clone(), c.clone(), c.clone()]);
    let results: Vec<Result<_, Error>> = futures::stream::iter(lookups)
        .map(|c| {
            let client = client.clone();
            async move { client.car(&c).await.map(|a| (c, a.origin, a.seq)) }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    for r in results {
        match r {
            Ok((codigo, origin, seq)) => println!("{} {codigo} entrada {seq:?}", origin.as_str()),
            // Unavailable, pool time-out: nothing was sent, worth retrying.
            Err(e) if e.is_retryable() => println!("tente de novo: {e}"),
            Err(e) => return Err(e.into()),
        }
    }
    client.close().await;
    let v = tokio::task::spawn_blocking(move || archive.verify(None)).await??;
    println!(
        "cadeia da equipe: {} entradas, {}",
        v.entries,
        if v.is_ok() { "íntegra" } else { "ALTERADA" }
    );
    Ok(())
}
