//! Lookups and balance: the five lines a new user writes.
//!
//! ```sh
//! CARAPI_BASE_URL=http://127.0.0.1:8080 CARAPI_API_KEY=... cargo run -p carapi-examples --example quickstart
//! ```
//! Each lookup of a real record is charged at the account's price (`saldo().precos`); the
//! sandbox code is free.

use carapi_sdk::{Client, sandbox};

#[tokio::main]
async fn main() -> Result<(), carapi_sdk::Error> {
    let client = Client::from_env()?;

    // Free: the contract's sandbox code answers with example data and never debits.
    let exemplo = client.car(sandbox::CAR_BASICO).await?;
    println!(
        "sandbox: {} ({})",
        exemplo.dados.codigo_car, exemplo.sandbox
    );

    // A real SICAR record from the bundled data; dotted or lower-case input is normalised.
    let car = client
        .car("df-5300108-b69b.317d.d02c.43da.a77a.0784.aeef.7d47")
        .await?;
    let d = &car.dados;
    println!(
        "{} | {} / {} | área {} ha | lat {:?} lon {:?}",
        d.codigo_car,
        d.municipio.as_deref().unwrap_or("-"),
        d.uf.as_deref().unwrap_or("-"),
        d.area_total().map(|a| a.to_string()).unwrap_or_default(),
        d.latitude_degrees(),
        d.longitude_degrees(),
    );

    let completo = client.car_completo(&d.codigo_car).await?;
    for (nome, documento) in completo.dados.proprietarios() {
        println!("proprietário: {nome} ({documento})");
        let outros = client.proprietario(&documento).await?;
        println!("  {} CAR(s), truncado: {}", outros.total, outros.truncado);
    }

    let saldo = client.saldo().await?;
    println!(
        "saldo: {}",
        carapi_sdk::domain::brl::format(saldo.saldo_reais)
    );
    Ok(())
}
