//! The use cases of the service, one module per flow, between the thin HTTP handlers above
//! them and the store, the money core and the PIX provider below:
//!
//! - [`consulta`]: the four charged lookups (contract, "Lookups"): the key parsed once, the
//!   sandbox answer, the fetch, the charge with its lost-reply recovery, the history row of
//!   every outcome;
//! - [`recarga`]: PIX top-ups (contract, "Top-up endpoints"): the preview, creating or reusing
//!   a charge, the status and the list;
//! - [`conta`]: the account endpoints (contract, "Account endpoints"): balance, history, limits
//!   and usage.
//!
//! A flow answers the contract's models (from `carapi-sdk`) or the contract's error answer
//! ([`crate::api_error::ApiError`]); it knows no HTTP request or response.

pub(crate) mod consulta;
pub(crate) mod conta;
pub(crate) mod pagination;
pub(crate) mod recarga;
