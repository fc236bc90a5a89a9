use carapi_sdk::{Client, Error, dec, sandbox};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let client = Client::builder()
        .base_url("http://127.0.0.1:8080") // default: $CARAPI_BASE_URL
        .api_key("sk_test_...") // default: $CARAPI_API_KEY
        .max_spend(dec!(50)) // optional spend cap of this client, BRL
        .build()?; // or Client::from_env()

    let car = client.car(sandbox::CAR_BASICO).await?; // sandbox values cost nothing
    println!("{:?} ha", car.dados.area_total());

    let saldo = client.saldo().await?;
    println!("saldo: R$ {}; gasto: {:?}", saldo.saldo_reais, client.gasto());
    Ok(())
}
