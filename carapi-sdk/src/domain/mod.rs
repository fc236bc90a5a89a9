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
pub(crate) mod mask;
pub mod pix;
pub mod uf;

use std::fmt;

pub use codigo_car::CodigoCar;
pub use cpf_cnpj::{CpfCnpj, TipoDocumento, complete_check_digits};

/// Why a value given to the SDK was refused before any request was sent.
///
/// Returned by [`CodigoCar::parse`], [`CpfCnpj::parse`] and the parsers of [`br`], [`dms`] and
/// [`pix`]. Each variant carries the value as the user gave it. Its `Display` and `Debug` show
/// that value masked (it may be personal data, and error texts end up in logs): a CPF/CNPJ as
/// `***.456.789-**`, anything that is not a CAR code without its letters (`Fulano` becomes
/// `******`); a CAR code as given.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// Not a CAR code of shape `UF-IIIIIII-<32 hex>` (docs/dominio.md "CAR code"), nor a sandbox code.
    #[error("código CAR inválido: {:?} (formato esperado UF-IIIIIII-<32 hexadecimais>)", mask::input(.0))]
    CodigoCar(String),
    /// Not a CPF (11 digits) or CNPJ (14 characters) with correct check digits (Receita mod-11).
    #[error("CPF/CNPJ inválido: {:?}", mask::input(.0))]
    CpfCnpj(String),
    /// A registry string (area, date, coordinate) not in the contract's Brazilian pattern.
    #[error("valor fora do padrão do registro: {:?}", mask::input(.0))]
    Formato(String),
    /// A PIX BR Code whose layout or CRC16 is wrong (BCB BR Code manual).
    #[error("BR Code PIX inválido: {}", mask::documentos(.0))]
    BrCode(String),
}

impl fmt::Debug for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (variante, valor) = match self {
            Self::CodigoCar(v) => ("CodigoCar", mask::input(v)),
            Self::CpfCnpj(v) => ("CpfCnpj", mask::input(v)),
            Self::Formato(v) => ("Formato", mask::input(v)),
            Self::BrCode(v) => ("BrCode", mask::documentos(v).into_owned()),
        };
        f.debug_tuple(variante).field(&valor).finish()
    }
}
