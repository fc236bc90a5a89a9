#![doc = include_str!("../README.md")]
//!
//! # Modules
//!
//! - [`models`]: every resource of the contract (re-exported at the root).
//! - [`domain`]: CAR codes, CPF/CNPJ, Brazilian numbers/dates/coordinates, BRL, PIX BR Code.
//! - [`sandbox`]: the contract's reserved test values.
//! - [`labels`]: the Portuguese column titles of the fields people read (tables, spreadsheets).
//! - `blocking` (cargo feature `blocking`): the same client for synchronous programs.
//! - `archive` (cargo feature `archive`): the archive of paid answers (reuse, hash chain, LGPD
//!   tools).
//!
//! # Names
//!
//! One rule for every public item: **the contract's words** (Portuguese, as `docs/contrato.md`
//! and `docs/dominio.md` write them) for its operations, resources, fields, money and domain
//! values: [`Client::saldo`], [`Client::criar_recarga`], [`Client::historico`],
//! [`SaldoResponse::saldo_reais`], [`Gasto::confirmado`], [`CodigoCar::municipio_ibge`];
//! **English for the client's own machinery**: configuration, time-outs, retries, streams,
//! settling, and Rust's conventional verbs and prefixes ([`ClientBuilder::max_spend`],
//! [`ClientBuilder::receipt_timeout`], [`Client::with_timeout`], [`Client::settle_incertos`],
//! [`Client::wait_for_recarga`], [`Paginator`], `parse`, `as_str`, `is_*`, `ALL`). An operation
//! delivered another way keeps its contract name with an English suffix
//! ([`Client::historico_stream`], [`Client::recibo_download`], [`Client::recibo_to_file`]).
//! The renames of 0.2.0 are listed in the repository's `CHANGELOG.md`.
//!
//! # Types from other crates
//!
//! Every type of another crate that appears in this API is re-exported, so an application never
//! needs (nor pins) a second copy: [`Decimal`], [`Uuid`], [`DateTime`] and the other chrono types,
//! [`Url`], [`Bytes`], the [`serde_json`] crate (the models are its types' `Serialize` /
//! `Deserialize`; [`DecodeError::category`] is its `Category`) and [`reqwest`] (for
//! [`ClientBuilder::http_client`]).
//!
//! ```
//! fn uses_only_the_sdk<'e>(
//!     client: &carapi_sdk::Client,
//!     recibo: carapi_sdk::Recibo,
//!     erro: &'e carapi_sdk::Error,
//! ) -> (carapi_sdk::Url, carapi_sdk::Bytes, Option<carapi_sdk::serde_json::error::Category>) {
//!     let json = match erro {
//!         carapi_sdk::Error::Decode { source, .. } => Some(source.category()),
//!         _ => None,
//!     };
//!     (client.base_url().clone(), recibo.bytes, json)
//! }
//! ```
//!
//! Depending on this crate changes nothing in how your own types serialise: the models say per
//! field how their amounts are written (a JSON number, as the contract has them), and the SDK
//! turns no crate-wide feature of `rust_decimal` on (`serde_json::to_string(&dec!(1.30))` stays
//! `"1.30"` in your application).
//!
//! # Cargo features
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
#![cfg_attr(
    not(feature = "document-features"),
    doc = "`rustls` (default), `rustls-tls-native-roots`, `native-tls`, `blocking`, `openapi`, `archive`, `archive-postgres`: see `Cargo.toml` (described on docs.rs)."
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod answer;
#[cfg(feature = "archive")]
#[cfg_attr(docsrs, doc(cfg(feature = "archive")))]
pub mod archive;
#[cfg(feature = "blocking")]
#[cfg_attr(docsrs, doc(cfg(feature = "blocking")))]
pub mod blocking;
mod client;
mod dec;
pub mod domain;
mod error;
mod error_code;
mod join;
pub mod labels;
mod limiter;
pub mod models;
mod op;
mod page;
mod retry;
mod runtime;
pub mod sandbox;
mod spend;
mod wait;

pub use answer::{Answer, Origin};
pub use client::{
    Client, ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_IN_FLIGHT, DEFAULT_RECEIPT_TIMEOUT,
    DEFAULT_TIMEOUT, ENV_API_KEY, ENV_BASE_URL, Falta, MIN_POLL_INTERVAL, ReciboDownload,
    ReciboInfo, ReciboProgress, Settlement,
};
#[doc(hidden)]
pub use dec::__dec_parse;
pub use domain::{CodigoCar, CpfCnpj};
pub use error::{ApiError, DecodeError, Error, EscopoLimite, HEADER_LIMITE, Result, error_chain};
pub use spend::Gasto;

/// The receipt's bytes ([`Recibo::bytes`], [`ReciboDownload::chunk`]); bytes'.
#[doc(no_inline)]
pub use bytes::Bytes;
/// Date-time types of the models' fields (`dataConsulta`, `data`, …) and of
/// [`domain::br::parse_data`] (chrono's, same version as the SDK's).
#[doc(no_inline)]
pub use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
pub use error_code::{ErrorCode, OtherCode};
pub use limiter::DEFAULT_RATE_LIMIT;
pub use models::*;
pub use page::Paginator;
/// The HTTP client the SDK is built on, for [`ClientBuilder::http_client`] (same version).
pub use reqwest;
pub use retry::RetryPolicy;
/// BRL amounts and prices: every amount of the API ([`dec!`] builds one); rust_decimal's.
#[doc(no_inline)]
pub use rust_decimal::Decimal;
/// The JSON library the models are decoded with (same version as the SDK's).
pub use serde_json;
/// The token that cancels the calls of a handle made with [`Client::with_cancel`] before they
/// are sent; tokio-util's.
#[doc(no_inline)]
pub use tokio_util::sync::CancellationToken;
/// The base address of a client ([`Client::base_url`]); url's.
#[doc(no_inline)]
pub use url::Url;
/// The OpenAPI library whose `ToSchema` / `IntoParams` the wire types implement with the
/// `openapi` feature (same version as the SDK's).
#[cfg(feature = "openapi")]
pub use utoipa;
/// Top-up ids ([`Client::recarga`]); uuid's.
#[doc(no_inline)]
pub use uuid::Uuid;
