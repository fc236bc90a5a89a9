//! Wire types: every resource of the API contract, field for field.
//!
//! Field names are the contract's `camelCase` on the wire and `snake_case` in Rust; nullable
//! fields are `Option`; money is [`Decimal`](rust_decimal::Decimal) in BRL (a JSON number on the
//! wire, never an `f64` in our code); timestamps are `DateTime<FixedOffset>` and decode with or
//! without an offset (a bare local time is taken as Brasília time, UTC-3). Unknown extra fields
//! are ignored, so a server that adds fields never breaks decoding.
//!
//! CAR strings (areas, dates, coordinates) stay exactly as the registry sends them; typed
//! accessors such as [`CarDadosBasicos::area_total`] read them.
//!
//! These structs are not `#[non_exhaustive]`: the reference server builds them too, and the
//! contract is versioned (`/v1`, 1.0.0), so a new field is a new contract version.

mod car;
mod conta;
mod endpoint;
mod error;
mod params;
mod precos;
mod proprietario;
mod recarga;
mod tarifa;
pub mod timestamp;

pub use car::{CarDadosBasicos, CarDadosCompletos, CarResponse, Recibo};
pub use conta::{
    ConsumoItem, HistoricoResponse, LimitesResponse, LimitesUpdate, SaldoResponse, UsoHoje,
    UsoItem, UsoMes, UsoResponse,
};
pub use endpoint::{EndpointConsulta, EndpointRegistrado};
pub use error::ApiErrorBody;
pub use params::{HistoricoParams, RecargasParams, StatusConsulta};
pub use precos::Precos;
pub use proprietario::{ProprietarioItem, ProprietarioResponse};
pub use recarga::{
    FaixaBonus, FaixasResponse, NovaRecarga, PreviewBonus, PreviewRecarga, RecargaCriadaResponse,
    RecargaItem, RecargaStatus, RecargaStatusResponse, RecargasResponse,
};
pub use tarifa::{DegrauBonus, FAIXAS_BONUS, faixas_bonus, percentual_bonus};

/// `skip_serializing_if` helper: `sandbox` is present only when true (contract "Sandbox").
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}
