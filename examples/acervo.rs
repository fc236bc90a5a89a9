//! The archive of paid answers in a SQLite file (cargo feature `archive`): the first lookup of a
//! code buys it, the next ones read it from the archive at no charge, for as long as the policy
//! allows; a lookup dropped after its request left still has its answer kept; then the chain is
//! verified and the record of processing exported (LGPD art. 37).
//!
//! ```sh
//! CARAPI_BASE_URL=http://127.0.0.1:8080 CARAPI_API_KEY=... CARAPI_ACERVO=acervo.sqlite3 \
//!     cargo run -p carapi-examples --example acervo [CODIGO_CAR...]
//! ```
//! Run it twice with the same file: the second run buys nothing.

use std::time::Duration;

use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness, LegalBasis};
use carapi_sdk::{Client, Origin};

/// Two of the reference server's records, when no code is given.
const CODIGOS: [&str; 2] = [
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::var("CARAPI_ACERVO").unwrap_or_else(|_| "acervo.sqlite3".into());
    let codigos: Vec<String> = std::env::args().skip(1).collect();
    let codigos: Vec<&str> = if codigos.is_empty() {
        CODIGOS.to_vec()
    } else {
        codigos.iter().map(String::as_str).collect()
    };
    let archive = Archive::open(&path)?;
    let policy = ArchivePolicy::new(
        "due diligence de fornecedores",
        LegalBasis::LegitimateInterest,
        Freshness::MaxAge(Duration::from_secs(30 * 24 * 3600)),
    );
    let client = Client::builder().archive(archive.clone(), policy).build()?;

    // Each code twice: bought (or read) once, then read from the archive.
    for codigo in &codigos {
        for _ in 0..2 {
            let car = client.car(codigo).await?;
            let how = match car.origin {
                Origin::Api => "comprada agora",
                Origin::Archive => "do acervo, sem cobrança",
            };
            println!(
                "{} {} | {how} (comprada em {}, entrada {:?})",
                car.origin.as_str(),
                car.dados.codigo_car,
                car.bought_at,
                car.seq
            );
        }
    }

    // A caller that gives up after 1 ms (a time-out, a client that went away): once its request
    // left, its purchase ends in a task of the client, which `close` waits for, and its answer
    // is kept; the next lookup reads it.
    let _ = tokio::time::timeout(
        Duration::from_millis(1),
        client.with_freshness(Freshness::Never).car(codigos[0]),
    )
    .await;
    let running = client.close().await;
    println!("compras em andamento ao fechar: {running}");

    // The audit tools block: run them off the runtime's threads.
    let report = tokio::task::spawn_blocking(
        move || -> Result<String, carapi_sdk::archive::ArchiveError> {
            let v = archive.verify(None)?;
            let mut csv = Vec::new();
            archive.export_csv(&mut csv)?;
            Ok(format!(
                "cadeia: {} entradas, {}; registro das operações: {} linhas de CSV",
                v.entries,
                if v.is_ok() { "íntegra" } else { "ALTERADA" },
                csv.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count()
            ))
        },
    )
    .await??;
    println!("{report}");
    println!("gasto deste cliente: {:?}", client.gasto());
    Ok(())
}
