//! Reads the balance: `CARAPI_BASE_URL` and `CARAPI_API_KEY` from the environment.

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), carapi_sdk::Error> {
    let client = carapi_sdk::Client::from_env()?;
    let saldo = client.saldo().await?;
    println!("saldo: R$ {}", saldo.saldo_reais);
    let mut historico = client.historico_stream(carapi_sdk::HistoricoParams::default());
    while let Some(item) = historico.next().await {
        println!("{}", item?.endpoint);
    }
    Ok(())
}
