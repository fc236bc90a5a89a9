//! A PIX top-up: create the charge, draw its QR code in the terminal, wait for confirmation.
//!
//! ```sh
//! CARAPI_BASE_URL=... CARAPI_API_KEY=... cargo run -p carapi-examples --example recarga
//! ```
//! `CARAPI_RECARGA_VALOR` sets the amount in BRL (default 500, the contract's minimum) and
//! `CARAPI_RECARGA_TIMEOUT_SECS` the wait (default 600 s). `CARAPI_POLL_MS` polls faster than
//! the contract's 5 s, for a local reference server only. Against the reference server, pay it
//! with `carapi-server pix pay <paymentId> --server <url>` or `carapi --local local pay <id>`.
//! Creating twice within 10 minutes reuses the same pending PIX (`reaproveitada`), so a retry
//! never creates a second charge.

use std::str::FromStr;
use std::time::Duration;

use carapi_sdk::{Client, Decimal, NovaRecarga};
use qrcode::{QrCode, render::unicode::Dense1x2};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut builder = Client::builder();
    if let Some(ms) = std::env::var("CARAPI_POLL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        // A local server: no need to keep to the 5 s the contract recommends.
        builder = builder.poll_interval_unchecked(Duration::from_millis(ms));
    }
    let client = builder.build()?;
    let valor = std::env::var("CARAPI_RECARGA_VALOR")
        .ok()
        .and_then(|v| Decimal::from_str(&v).ok())
        .unwrap_or(Decimal::from(500));
    let espera = std::env::var("CARAPI_RECARGA_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(600), Duration::from_secs);

    let faixas = client.faixas_recarga(Some(valor)).await?;
    let recarga = client
        .criar_recarga(&NovaRecarga {
            valor,
            confirmar_novos_precos: faixas.confirmar_novos_precos_obrigatorio,
        })
        .await?;

    let qr = QrCode::new(recarga.qr_code.as_bytes())?;
    println!("{}", qr.render::<Dense1x2>().quiet_zone(true).build());
    println!("PIX copia e cola: {}", recarga.qr_code);
    println!("recargaId: {}", recarga.recarga_id);
    println!("paymentId: {}", recarga.payment_id);
    println!(
        "bônus: {}% ({}), total a creditar: {}",
        recarga.preview_bonus.percentual_bonus,
        carapi_sdk::domain::brl::format(recarga.preview_bonus.valor_bonus),
        carapi_sdk::domain::brl::format(recarga.preview_bonus.total_creditado),
    );

    let status = client.wait_for_recarga(recarga.recarga_id, espera).await?;
    println!(
        "status: {} | saldo: {}",
        status.status,
        carapi_sdk::domain::brl::format(status.saldo_atual)
    );
    Ok(())
}
