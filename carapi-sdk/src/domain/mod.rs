//! Domain types of Brazil's rural environmental registry, validated locally.
//!
//! Everything here is pure (no I/O) and shared by the SDK, the CLI and the reference server:
//! the CAR code ([`CodigoCar`]), owner documents ([`CpfCnpj`]), the registry's Brazilian number,
//! date and coordinate strings ([`br`], [`dms`]), money shown to people ([`brl`]) and the PIX
//! BR Code ([`pix`]). The rules and their test vectors come from `docs/dominio.md`.
//!
//! [`CodigoCar::parse`] and [`CpfCnpj::parse`] are the contract's rules, as the server applies
//! them. Where a person pastes a key (a command line, a spreadsheet column, a Python call),
//! [`CodigoCar::parse_pasted`] also reads the forms a CAR code takes when copied from a PDF or a
//! word processor (spaces or en/em dashes for its dashes, no dashes at all); its result is the
//! same normalised code.

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
pub use cpf_cnpj::{CpfCnpj, DocumentoKind, complete_check_digits};

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
    /// The text says why: the check digit does not match (`dígito verificador não confere`),
    /// every character is the same, or the length is neither a CPF's nor a CNPJ's.
    #[error("CPF/CNPJ inválido: {:?}: {}", mask::input(.0), cpf_cnpj::reason(.0))]
    CpfCnpj(String),
    /// A registry string (area, date, coordinate) not in the contract's Brazilian pattern.
    #[error("valor fora do padrão do registro: {:?}", mask::input(.0))]
    Format(String),
    /// A PIX BR Code whose layout or CRC16 is wrong (BCB BR Code manual).
    #[error("BR Code PIX inválido: {}", mask::documentos(.0))]
    BrCode(String),
}

impl fmt::Debug for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (variant, value) = match self {
            Self::CodigoCar(v) => ("CodigoCar", mask::input(v)),
            Self::CpfCnpj(v) => ("CpfCnpj", mask::input(v)),
            Self::Format(v) => ("Format", mask::input(v)),
            Self::BrCode(v) => ("BrCode", mask::documentos(v).into_owned()),
        };
        f.debug_tuple(variant).field(&value).finish()
    }
}

/// The trait impls every validated string of the domain shares: `FromStr`, `TryFrom<&str>`
/// (both through the type's `parse`), `AsRef<str>`, `Display` (the normalised value),
/// `Serialize` (a string) and `Deserialize` (through `parse`, so a bad value is a serde error);
/// `Debug` is written by `$debug`, a `fn(&str) -> String` of the normalised value (a document
/// masked there).
macro_rules! validated_string {
    ($name:ident, $debug:expr) => {
        impl std::str::FromStr for $name {
            type Err = ValidationError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = ValidationError;
            fn try_from(s: &str) -> Result<Self, Self::Error> {
                Self::parse(s)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let debug: fn(&str) -> String = $debug;
                write!(f, "{}({})", stringify!($name), debug(&self.0))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::parse(s).map_err(serde::de::Error::custom)
            }
        }
    };
}
use validated_string;
