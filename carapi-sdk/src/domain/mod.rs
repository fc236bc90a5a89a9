//! Domain types of Brazil's rural environmental registry, validated locally.
//!
//! Everything here is pure (no I/O) and shared by the SDK, the CLI and the reference server:
//! the CAR code ([`CodigoCar`]), owner documents ([`CpfCnpj`]), the registry's Brazilian number,
//! date and coordinate strings ([`br`], [`dms`]), money shown to people ([`brl`]) and the PIX
//! BR Code ([`pix`]). The rules and their test vectors come from `docs/dominio.md`.

pub mod br;
pub mod brl;
mod codigo_car;
mod cpf_cnpj;
pub mod dms;
pub mod pix;
pub mod uf;

pub use codigo_car::CodigoCar;
pub use cpf_cnpj::{CpfCnpj, TipoDocumento, completar_digitos};

/// Why a value given to the SDK was refused before any request was sent.
///
/// Returned by [`CodigoCar::parse`], [`CpfCnpj::parse`] and the parsers of [`br`], [`dms`] and
/// [`pix`]. Each variant carries the value as the user gave it, for the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// Not a CAR code of shape `UF-IIIIIII-<32 hex>` (docs/dominio.md "CAR code"), nor a sandbox code.
    #[error("código CAR inválido: {0:?} (formato esperado UF-IIIIIII-<32 hexadecimais>)")]
    CodigoCar(String),
    /// Not a CPF (11 digits) or CNPJ (14 characters) with correct check digits (Receita mod-11).
    #[error("CPF/CNPJ inválido: {0:?}")]
    CpfCnpj(String),
    /// A registry string (area, date, coordinate) not in the contract's Brazilian pattern.
    #[error("valor fora do padrão do registro: {0:?}")]
    Formato(String),
    /// A PIX BR Code whose layout or CRC16 is wrong (BCB BR Code manual).
    #[error("BR Code PIX inválido: {0}")]
    BrCode(String),
}
