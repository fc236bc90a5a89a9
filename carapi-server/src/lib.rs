//! Reference server for the carapi `/v1` contract.
#![warn(missing_docs)]

pub mod dados;
