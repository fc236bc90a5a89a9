//! Complete lookups (owners included) under a spend cap: at most `CARAPI_MAX_SPEND` BRL
//! (default 5.00) is spent, whatever happens to the answers.
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example car_completo
//! ```
//! Four lookups run at once. One that would pass the cap only because of the lookups in flight
//! waits for them (a 404 costs nothing and frees its share); one that cannot fit is refused
//! before it is sent (`Error::SpendLimit`). A lost answer counts as spent (`Gasto::incerto`).

use std::str::FromStr;

use carapi_sdk::{Client, Decimal, Error, dec, domain::brl};
use futures::{StreamExt, stream};

const CODIGOS: [&str; 5] = [
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "DF-5300108-00000000000000000000000000000000", // 404: not charged
    "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199",
    "MT-5107925-D6C8D851BCE54F42A51A5DC123B0108B",
    "MT-5107925-F812CA1562454F1BB591AFADD0480E03",
];

#[tokio::main]
async fn main() -> Result<(), Error> {
    let cap = std::env::var("CARAPI_MAX_SPEND")
        .ok()
        .and_then(|v| Decimal::from_str(&v).ok())
        .unwrap_or(dec!(5.00));
    let client = Client::builder().max_spend(cap).build()?;

    let mut results = stream::iter(CODIGOS)
        .map(|codigo| {
            let client = client.clone();
            async move { (codigo, client.car_completo(codigo).await) }
        })
        .buffer_unordered(4);
    while let Some((codigo, result)) = results.next().await {
        match result {
            Ok(r) => println!(
                "ok       {codigo} proprietários: {}",
                r.dados.proprietarios_nomes.as_deref().unwrap_or_default()
            ),
            Err(e @ Error::SpendLimit { .. }) => println!("limite   {codigo} {e}"),
            Err(e) => println!("erro     {codigo} {e}"),
        }
    }
    let gasto = client.gasto();
    println!(
        "gasto: {} confirmado, {} incerto, limite {}",
        brl::format(gasto.confirmado),
        brl::format(gasto.incerto),
        brl::format(cap)
    );
    Ok(())
}
