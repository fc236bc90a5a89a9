//! The registry's coded values of a CAR record, parsed once where they enter (a SICAR file, the
//! bundled file, a database row) and typed from then on: the state ([`Uf`]), the record's
//! status ([`StatusImovel`]) and its kind ([`TipoImovel`]) (docs/dominio.md, "Public SICAR
//! record fields").

use std::fmt;

use carapi_sdk::domain::uf;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One of the 27 Brazilian states (UF) of the IBGE list, by its two-letter code (`DF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uf(&'static str);

impl Uf {
    /// The state of the two-letter code `sigla` (upper case), if it is one.
    pub fn parse(code: &str) -> Option<Uf> {
        uf::UFS
            .iter()
            .find(|(s, _, _)| *s == code)
            .map(|(s, _, _)| Uf(s))
    }

    /// The two-letter code (`DF`).
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The state's name written out in full, as the contract's `uf` field carries it
    /// (`Distrito Federal`).
    pub fn nome(self) -> &'static str {
        uf::nome(self.0).unwrap_or(self.0)
    }

    /// The state's IBGE code (53 for DF): the first two digits of its municipalities' codes.
    pub fn codigo_ibge(self) -> u8 {
        uf::codigo_ibge(self.0).unwrap_or_default()
    }
}

/// SICAR `status_imovel`: where the record stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusImovel {
    /// `AT`: active.
    Ativo,
    /// `PE`: pending (its receipt not issued yet).
    Pendente,
    /// `SU`: suspended.
    Suspenso,
    /// `CA`: cancelled.
    Cancelado,
}

impl StatusImovel {
    /// The status of the code `AT`, `PE`, `SU` or `CA`.
    pub fn parse(codigo: &str) -> Option<StatusImovel> {
        Some(match codigo {
            "AT" => StatusImovel::Ativo,
            "PE" => StatusImovel::Pendente,
            "SU" => StatusImovel::Suspenso,
            "CA" => StatusImovel::Cancelado,
            _ => return None,
        })
    }

    /// The registry's code.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusImovel::Ativo => "AT",
            StatusImovel::Pendente => "PE",
            StatusImovel::Suspenso => "SU",
            StatusImovel::Cancelado => "CA",
        }
    }

    /// The status written out, as the receipt prints it (`Ativo`).
    pub fn nome(self) -> &'static str {
        match self {
            StatusImovel::Ativo => "Ativo",
            StatusImovel::Pendente => "Pendente",
            StatusImovel::Suspenso => "Suspenso",
            StatusImovel::Cancelado => "Cancelado",
        }
    }

    /// True when a receipt exists for a record in this status: not for a pending record
    /// (not issued yet) nor a cancelled one.
    pub fn has_recibo(self) -> bool {
        !matches!(self, StatusImovel::Pendente | StatusImovel::Cancelado)
    }
}

/// SICAR `tipo_imovel`: the kind of property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TipoImovel {
    /// `IRU`: rural property.
    Rural,
    /// `AST`: agrarian-reform settlement.
    Assentamento,
    /// `PCT`: territory of traditional peoples and communities.
    PovosTradicionais,
}

impl TipoImovel {
    /// The kind of the code `IRU`, `AST` or `PCT`.
    pub fn parse(codigo: &str) -> Option<TipoImovel> {
        Some(match codigo {
            "IRU" => TipoImovel::Rural,
            "AST" => TipoImovel::Assentamento,
            "PCT" => TipoImovel::PovosTradicionais,
            _ => return None,
        })
    }

    /// The registry's code, as the contract's `tipoImovel` carries it.
    pub fn as_str(self) -> &'static str {
        match self {
            TipoImovel::Rural => "IRU",
            TipoImovel::Assentamento => "AST",
            TipoImovel::PovosTradicionais => "PCT",
        }
    }
}

/// A registry code type, for reading one back from a stored column.
pub(crate) trait Code: Sized {
    /// The value of the code `codigo`, if it is one.
    fn from_code(codigo: &str) -> Option<Self>;
}

/// The code stored in a column (`None` read as the empty string): `Err` names the column and
/// the value when it is none of the codes, for `StoreError::Corrupt`.
pub(crate) fn stored<T: Code>(column: &str, valor: Option<&str>) -> Result<T, String> {
    let valor = valor.unwrap_or_default();
    T::from_code(valor).ok_or_else(|| format!("{column} {valor:?}"))
}

impl TipoImovel {
    /// The kind written out, as the receipt prints it after its code (`Imóvel Rural`).
    pub fn nome(self) -> &'static str {
        match self {
            TipoImovel::Rural => "Imóvel Rural",
            TipoImovel::Assentamento => "Assentamento de Reforma Agrária",
            TipoImovel::PovosTradicionais => "Território de Povos e Comunidades Tradicionais",
        }
    }
}

macro_rules! code_serde {
    ($t:ty, $what:literal) => {
        impl Code for $t {
            fn from_code(codigo: &str) -> Option<Self> {
                <$t>::parse(codigo)
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                <$t>::parse(&s)
                    .ok_or_else(|| serde::de::Error::custom(format!(concat!($what, " {:?}"), s)))
            }
        }
    };
}

code_serde!(Uf, "UF desconhecida:");
code_serde!(StatusImovel, "status_imovel desconhecido:");
code_serde!(TipoImovel, "tipo_imovel desconhecido:");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_and_print_back() {
        let df = Uf::parse("DF").unwrap();
        assert_eq!(
            (df.as_str(), df.nome(), df.codigo_ibge()),
            ("DF", "Distrito Federal", 53)
        );
        assert_eq!(Uf::parse("XX"), None);
        assert_eq!(Uf::parse("df"), None);
        for c in ["AT", "PE", "SU", "CA"] {
            assert_eq!(StatusImovel::parse(c).unwrap().as_str(), c);
        }
        assert!(!StatusImovel::Pendente.has_recibo() && StatusImovel::Ativo.has_recibo());
        for c in ["IRU", "AST", "PCT"] {
            assert_eq!(TipoImovel::parse(c).unwrap().as_str(), c);
        }
        assert_eq!(TipoImovel::parse("XYZ"), None);
        assert_eq!(serde_json::to_string(&df).unwrap(), "\"DF\"");
        assert!(serde_json::from_str::<Uf>("\"ZZ\"").is_err());
    }
}
