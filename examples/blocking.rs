//! A lookup from a plain `fn main`: no async, no runtime to set up (cargo feature `blocking`).
//!
//! ```sh
//! CARAPI_BASE_URL=http://127.0.0.1:8080 CARAPI_API_KEY=... cargo run -p carapi-examples --example blocking
//! ```
//! The real record is charged at the account's price; the sandbox code is free. The blocking
//! client has every operation of the async one, with the same spend figures and errors.

use carapi_sdk::blocking::Client;
use carapi_sdk::domain::brl;
use carapi_sdk::sandbox;

fn main() -> Result<(), carapi_sdk::Error> {
    let client = Client::from_env()?;

    let exemplo = client.car(sandbox::CAR_BASICO)?;
    println!(
        "sandbox: {} ({})",
        exemplo.dados.codigo_car, exemplo.sandbox
    );

    let car = client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")?;
    println!(
        "{} | {} | área {:?} ha",
        car.dados.codigo_car,
        car.dados.municipio.as_deref().unwrap_or("-"),
        car.dados.area_total()
    );

    let saldo = client.saldo()?;
    let gasto = client.gasto();
    println!(
        "saldo: {} | gasto deste cliente: {} (incerto {})",
        brl::format(saldo.saldo_reais),
        brl::format(gasto.confirmado),
        brl::format(gasto.incerto)
    );
    for item in client.historico_stream(Default::default()).take(3) {
        let item = item?;
        println!(
            "{} {} {}",
            item.data,
            item.endpoint,
            brl::format(item.valor_cobrado)
        );
    }
    Ok(())
}
