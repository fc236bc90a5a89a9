//! A stream of CAR codes under the spend guard: at most `CARAPI_MAX_SPEND` BRL (default 3.00)
//! is spent, at the SDK's default rate limit (10 requests/s, the contract's limit).
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example lote
//! ```
//! Lookups past the cap are refused locally, before any request: nothing is charged for them.

use std::str::FromStr;

use carapi_sdk::{Client, Decimal, Error, dec};
use futures::{StreamExt, stream};

const CODIGOS: [&str; 8] = [
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199",
    "MT-5107925-D6C8D851BCE54F42A51A5DC123B0108B",
    "MT-5107925-F812CA1562454F1BB591AFADD0480E03",
    "ZZ-0000000-SANDBOXCARBASICO0000000000000000",
    "ZZ-0000000-SANDBOXNAOEXISTE0000000000000000",
    "nao-e-um-codigo",
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
];

#[tokio::main]
async fn main() -> Result<(), Error> {
    let cap = std::env::var("CARAPI_MAX_SPEND")
        .ok()
        .and_then(|v| Decimal::from_str(&v).ok());
    let client = Client::builder()
        .max_spend(cap.unwrap_or(dec!(3.00)))
        .build()?;

    let mut results = stream::iter(CODIGOS)
        .map(|codigo| {
            let client = client.clone();
            async move { (codigo, client.car(codigo).await) }
        })
        .buffered(4);

    while let Some((codigo, result)) = results.next().await {
        match result {
            Ok(r) => println!(
                "ok       {codigo} {}",
                r.dados.municipio.as_deref().unwrap_or_default()
            ),
            Err(e @ Error::SpendLimit { .. }) => println!("limite   {codigo} {e}"),
            Err(e) => println!("erro     {codigo} {e}"),
        }
    }
    let gasto = client.gasto();
    println!(
        "gasto: {} (incerto: {})",
        carapi_sdk::domain::brl::format(gasto.confirmado),
        carapi_sdk::domain::brl::format(gasto.incerto)
    );
    Ok(())
}
