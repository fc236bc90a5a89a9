//! Reference server for the carapi `/v1` contract: axum over an embedded SQLite store (WAL) by
//! default or PostgreSQL (chosen by the database URL),
//! with real money rules, a simulated PIX provider, the payment webhook and reconciliation.
//!
//! Library API (used by the CLI's local mode, the top-level tests and the examples):
//!
//! ```no_run
//! # async fn demo() -> Result<(), carapi_service::ServerError> {
//! use carapi_service::{Config, NovaConta, spawn};
//! let server = spawn(Config::local("sqlite://demo.db")).await?;
//! let conta = server.create_conta(NovaConta::default()).await?;
//! println!("{} {}", server.base_url(), conta.api_key);
//! server.shutdown().await;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod api_error;
pub mod auth;
pub(crate) mod cache;
pub mod clock;
pub mod config;
pub mod contas;
pub mod dados;
mod error;
mod flow;
pub mod http;
pub(crate) mod metrics;
pub mod money;
#[cfg(feature = "openapi")]
pub mod openapi;
pub mod pix;
pub mod rate_limit;
mod recibo;
pub mod reconcile;
pub mod retencao;
pub mod startup;
pub mod state;
pub mod store;

pub use config::{Config, Edge, ReciboMode};
pub use contas::{ContaCriada, NovaConta, create_conta};
pub use error::ServerError;
pub use money::Centavos;
pub use startup::{RunningServer, spawn};

pub use state::AppState;
pub use store::{ContaId, Ledger};
