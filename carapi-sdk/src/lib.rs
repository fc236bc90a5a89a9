//! Typed async client for the carapi `/v1` API over Brazil's rural environmental registry
//! (CAR, Cadastro Ambiental Rural): CAR lookups, owner lookups, receipts, the prepaid balance
//! and PIX top-ups.
//!
//! # Quickstart
//!
//! ```no_run
//! use carapi_sdk::{Client, Error, sandbox};
//!
//! # async fn run() -> Result<(), Error> {
//! let client = Client::builder()
//!     .base_url("http://127.0.0.1:8080") // default: $CARAPI_BASE_URL
//!     .api_key("sk_test_...")            // default: $CARAPI_API_KEY
//!     .build()?;                         // or Client::from_env()
//!
//! let car = client.car(sandbox::CAR_BASICO).await?; // sandbox values cost nothing
//! println!("{:?} ha", car.dados.area_total());
//!
//! let saldo = client.saldo().await?;
//! println!("saldo: R$ {}", saldo.saldo_reais);
//! # Ok(()) }
//! ```
//!
//! # What the client does for you
//!
//! - **Local validation.** Lookups take `impl AsRef<str>` and normalise it first
//!   ([`CodigoCar`], [`CpfCnpj`]: dots, masks, case); a malformed CAR code or a CPF/CNPJ with
//!   wrong check digits is an [`Error::Validation`] and no request is sent. The contract's
//!   [`sandbox`] values always pass.
//! - **Money.** Amounts are [`Decimal`](rust_decimal::Decimal) in BRL, never `f64`. Only an HTTP
//!   200 of a lookup is charged (contract, "Prices"); [`Client::gasto`] sums what this client
//!   was charged and [`ClientBuilder::max_spend`] refuses, before sending, a lookup that would
//!   pass a cap.
//! - **Retries that never charge twice.** [`RetryPolicy`]: exponential backoff with jitter,
//!   `Retry-After`, a retry budget; a charged lookup whose answer was lost is not re-sent unless
//!   you opt in ([`ClientBuilder::retry_charged_lookups`]).
//! - **Rate limit.** 10 requests/s per client by default, the contract's limit, so a batch
//!   does not meet a 429 it caused itself ([`ClientBuilder::rate_limit`]).
//! - **Time-outs.** 10 s to connect, 30 s per request, 120 s for the receipt PDF.
//! - **Errors.** One [`Error`]; an API error keeps the status, the [`ErrorCode`], the message and
//!   the sandbox flag, and reads `402 SALDO_INSUFICIENTE: <message>`.
//! - **Observability.** A `tracing` span `carapi_sdk.request` per call (`operation`, `method`,
//!   `attempt`, `status`) and a debug event per response on target `carapi_sdk::http`
//!   (`method`, `path`, `status`, `elapsed_ms`, `attempt`). The key is never logged and never
//!   shown by `Debug`.
//!
//! # Modules
//!
//! - [`models`]: every resource of the contract (re-exported at the root).
//! - [`domain`]: CAR codes, CPF/CNPJ, Brazilian numbers/dates/coordinates, BRL, PIX BR Code.
//! - [`sandbox`]: the contract's reserved test values.
#![warn(missing_docs)]

mod client;
pub mod domain;
mod error;
mod error_code;
mod limiter;
pub mod models;
mod page;
mod retry;
pub mod sandbox;
mod spend;
mod wait;

pub use client::{
    Client, ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_RECIBO_TIMEOUT, DEFAULT_TIMEOUT,
    ENV_API_KEY, ENV_BASE_URL, MIN_POLL_INTERVAL, ReciboDownload, ReciboInfo,
};
pub use domain::{CodigoCar, CpfCnpj};
pub use error::{ApiError, Error, Result};
pub use error_code::ErrorCode;
pub use limiter::DEFAULT_RATE_LIMIT;
pub use models::*;
pub use retry::RetryPolicy;
