//! Offline integration tests of the SDK against wiremock (one test binary, one module per
//! concern).

mod common;
mod errors;
mod limiter;
mod operations;
mod pagination;
mod recibo;
mod retry;
mod spend;
mod tracing_logs;
mod validation;
mod wait;
mod wire;
