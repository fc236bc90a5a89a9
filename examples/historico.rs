//! Walk the whole request history as one stream, page after page (100 per page), newest first.
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example historico
//! ```

use carapi_sdk::Decimal;
use carapi_sdk::{Client, HistoricoParams};
use futures::TryStreamExt;

#[tokio::main]
async fn main() -> Result<(), carapi_sdk::Error> {
    let client = Client::from_env()?;
    let params = HistoricoParams {
        size: Some(100),
        ..HistoricoParams::default()
    };

    let mut total = 0u64;
    let mut cobrado = Decimal::ZERO;
    let mut itens = std::pin::pin!(client.historico_stream(params));
    while let Some(item) = itens.try_next().await? {
        total += 1;
        cobrado += item.valor_cobrado;
        println!(
            "{} {:>3} {:<28} {}",
            item.data.format("%d/%m/%Y %H:%M:%S"),
            item.status_http,
            item.endpoint,
            item.chave_consulta.as_deref().unwrap_or("-"),
        );
    }
    println!(
        "{total} consultas, {} cobrados",
        carapi_sdk::domain::brl::format(cobrado)
    );
    Ok(())
}
