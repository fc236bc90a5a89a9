//! Typed async client for the carapi `/v1` API over Brazil's rural environmental registry (CAR).
#![warn(missing_docs)]

pub mod domain;
mod error_code;
pub mod models;
pub mod sandbox;

pub use domain::{CodigoCar, CpfCnpj};
pub use error_code::ErrorCode;
pub use models::*;
