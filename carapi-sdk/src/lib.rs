#![doc = include_str!("../README.md")]
//!
//! # Modules
//!
//! - [`models`]: every resource of the contract (re-exported at the root).
//! - [`domain`]: CAR codes, CPF/CNPJ, Brazilian numbers/dates/coordinates, BRL, PIX BR Code.
//! - [`sandbox`]: the contract's reserved test values.
#![warn(missing_docs)]

mod client;
mod dec;
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
    ENV_API_KEY, ENV_BASE_URL, Falta, MIN_POLL_INTERVAL, ProgressoRecibo, ReciboDownload,
    ReciboInfo, Resolucao,
};
#[doc(hidden)]
pub use dec::__dec_parse;
pub use domain::{CodigoCar, CpfCnpj};
pub use error::{ApiError, Error, EscopoLimite, HEADER_LIMITE, Result};
pub use spend::Gasto;

/// Date-time types of the models' fields (`dataConsulta`, `data`, …) and of
/// [`domain::br::parse_data`].
pub use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
pub use error_code::ErrorCode;
pub use limiter::DEFAULT_RATE_LIMIT;
pub use models::*;
/// The HTTP client the SDK is built on, for [`ClientBuilder::http_client`] (same version).
pub use reqwest;
pub use retry::RetryPolicy;
/// BRL amounts and prices: every amount of the API ([`dec!`] builds one).
pub use rust_decimal::Decimal;
/// Top-up ids ([`Client::recarga`]).
pub use uuid::Uuid;
