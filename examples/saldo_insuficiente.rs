//! Handling a 402 `SALDO_INSUFICIENTE`: what the lookup costs, the balance, and what is missing.
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example saldo_insuficiente
//! ```
//! The 402 itself never debits (contract, "Errors"). `Client::falta` reads the balance and the
//! account's prices with one free `GET /v1/saldo`.

use carapi_sdk::{Client, Error, ErrorCode, domain::brl};

const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

#[tokio::main]
async fn main() -> Result<(), Error> {
    let client = Client::from_env()?;
    let codigo = std::env::var("CARAPI_CODIGO_CAR").unwrap_or_else(|_| CODIGO.to_owned());
    match client.recibo(&codigo).await {
        Ok(recibo) => println!("recibo: {} ({} bytes)", recibo.filename, recibo.bytes.len()),
        Err(e) if e.code() == Some(ErrorCode::SaldoInsuficiente) => {
            println!("erro: {e}");
            if let Some(f) = client.falta(&e).await? {
                println!(
                    "{} custa {}; saldo {}; faltam {}",
                    f.operation,
                    brl::format(f.preco),
                    brl::format(f.saldo),
                    brl::format(f.falta)
                );
                println!("recarregue (mínimo R$ 500,00): carapi recarga criar 500");
            }
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
