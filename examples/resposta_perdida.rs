//! A lost answer resolved against the history: the lookup's request reached the server but its
//! answer never came back (time-out, connection reset). It may have been charged, so it is not
//! re-sent; the free history tells whether it was.
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example resposta_perdida
//! ```
//! `CARAPI_CODIGO_CAR` sets the code; `CARAPI_TIMEOUT_MS` the per-call time-out (default 30 s).

use std::time::Duration;

use carapi_sdk::{Client, Error, domain::brl};

const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

#[tokio::main]
async fn main() -> Result<(), Error> {
    let client = Client::from_env()?;
    let codigo = std::env::var("CARAPI_CODIGO_CAR").unwrap_or_else(|_| CODIGO.to_owned());
    let timeout = std::env::var("CARAPI_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis);

    match client.with_timeout(timeout).car(&codigo).await {
        Ok(car) => println!("ok: {:?}", car.dados.nome_imovel),
        Err(e) if e.may_have_charged() => {
            println!("resposta perdida: {e}");
            println!(
                "pode ter sido cobrada: não reenviada (is_retryable: {})",
                e.is_retryable()
            );
            let r = client.settle_incertos().await?;
            println!(
                "histórico: cobradas: {}, não cobradas: {}, pendentes: {}",
                r.cobradas, r.nao_cobradas, r.pendentes
            );
        }
        Err(e) => return Err(e),
    }
    let gasto = client.gasto();
    println!(
        "gasto: {} confirmado, {} incerto, {} sem preço",
        brl::format(gasto.confirmado),
        brl::format(gasto.incerto),
        gasto.nao_precificadas
    );
    Ok(())
}
