//! The charged endpoints: as the history filter names them and as a history row reports them
//! (contract, "`GET /v1/historico` query parameters", `endpoint`).

use serde::{Deserialize, Serialize};

/// The four charged endpoints in the registered form the history uses (contract,
/// "`GET /v1/historico` query parameters", `endpoint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[repr(u8)]
pub enum EndpointConsulta {
    /// `/v1/car/{codigo}`
    #[serde(rename = "/v1/car/{codigo}")]
    CarBasico = 0,
    /// `/v1/car/{codigo}/completo`
    #[serde(rename = "/v1/car/{codigo}/completo")]
    CarCompleto = 1,
    /// `/v1/car/{codigo}/recibo`
    #[serde(rename = "/v1/car/{codigo}/recibo")]
    Recibo = 2,
    /// `/v1/proprietario/{cpf_cnpj}`
    #[serde(rename = "/v1/proprietario/{cpf_cnpj}")]
    Proprietario = 3,
}

impl EndpointConsulta {
    /// Every endpoint, in the contract's order.
    pub const ALL: [EndpointConsulta; 4] = [
        Self::CarBasico,
        Self::CarCompleto,
        Self::Recibo,
        Self::Proprietario,
    ];

    /// The registered form, e.g. `/v1/car/{codigo}`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        self.row().registered
    }

    /// The SDK's name of the lookup (`car`, `car_completo`, `proprietario`, `recibo`): the
    /// method of [`Client`](crate::Client), and the operation the archive of paid answers
    /// stores and hashes (it never changes).
    #[must_use]
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The lookup named `name` (see [`EndpointConsulta::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The contract's route template, in the path syntax of the contract and of axum
    /// (`/v1/car/{codigoCar}`; contract, "Lookups").
    #[must_use]
    pub fn route(self) -> &'static str {
        self.row().route
    }

    /// The reserved sandbox values this lookup answers with fixed data (contract, "Sandbox"):
    /// [`sandbox::CODIGOS_CAR`](crate::sandbox::CODIGOS_CAR) for the three CAR lookups,
    /// [`sandbox::DOCUMENTOS`](crate::sandbox::DOCUMENTOS) for the owner lookup.
    #[must_use]
    pub fn sandbox_values(self) -> &'static [&'static str] {
        self.row().sandbox
    }

    /// True when the lookup's key is a CAR code (false: a CPF/CNPJ).
    #[must_use]
    pub fn takes_codigo_car(self) -> bool {
        self != Self::Proprietario
    }

    /// The short name people type and read in tables (`car`, `completo`, `recibo`,
    /// `proprietario`): the CLI's `--endpoint` and its history column.
    #[must_use]
    pub fn short_name(self) -> &'static str {
        self.row().short
    }

    fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }
}

/// One charged lookup of the contract: every name of it, in one place.
struct Row {
    name: &'static str,
    short: &'static str,
    route: &'static str,
    registered: &'static str,
    sandbox: &'static [&'static str],
}

/// The charged lookups, in the order of [`EndpointConsulta`]'s variants (contract, "Lookups",
/// "Prices", "Sandbox" and the `endpoint` filter of `GET /v1/historico`). Each variant's
/// price field is [`Precos::preco`](crate::Precos::preco)'s match.
const TABLE: [Row; 4] = [
    Row {
        name: "car",
        short: "car",
        route: "/v1/car/{codigoCar}",
        registered: "/v1/car/{codigo}",
        sandbox: &crate::sandbox::CODIGOS_CAR,
    },
    Row {
        name: "car_completo",
        short: "completo",
        route: "/v1/car/{codigoCar}/completo",
        registered: "/v1/car/{codigo}/completo",
        sandbox: &crate::sandbox::CODIGOS_CAR,
    },
    Row {
        name: "recibo",
        short: "recibo",
        route: "/v1/car/{codigoCar}/recibo",
        registered: "/v1/car/{codigo}/recibo",
        sandbox: &crate::sandbox::CODIGOS_CAR,
    },
    Row {
        name: "proprietario",
        short: "proprietario",
        route: "/v1/proprietario/{cpfCnpj}",
        registered: "/v1/proprietario/{cpf_cnpj}",
        sandbox: &crate::sandbox::DOCUMENTOS,
    },
];

impl std::str::FromStr for EndpointConsulta {
    type Err = String;
    /// Accepts the registered form or a short name ([`EndpointConsulta::short_name`]; `basico`
    /// is also the basic lookup).
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "basico" {
            return Ok(Self::CarBasico);
        }
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == s || e.short_name() == s)
            .ok_or_else(|| format!("endpoint inválido: {s:?}"))
    }
}

/// The `endpoint` of a history item ([`ConsumoItem`](crate::ConsumoItem)) or of a use row
/// ([`UsoItem`](crate::UsoItem)): one of the four charged endpoints of the contract, or a form
/// this SDK version does not know (a newer server's), kept as sent. On the wire it is the
/// registered form (`/v1/car/{codigo}`); it compares equal to the matching [`EndpointConsulta`].
///
/// ```
/// use carapi_sdk::{EndpointConsulta, EndpointRegistrado};
/// let e = EndpointRegistrado::from("/v1/car/{codigo}/completo");
/// assert_eq!(e, EndpointConsulta::CarCompleto);
/// assert_eq!(e, "/v1/car/{codigo}/completo");
/// assert_eq!(EndpointRegistrado::from("/v2/unknown").as_str(), "/v2/unknown");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EndpointRegistrado {
    /// One of the contract's charged endpoints.
    Consulta(EndpointConsulta),
    /// A registered form this SDK version does not know, as sent.
    Other(String),
}

impl EndpointRegistrado {
    /// The registered form, e.g. `/v1/car/{codigo}`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Consulta(e) => e.as_str(),
            Self::Other(s) => s,
        }
    }

    /// The charged endpoint, when it is one this SDK version knows.
    #[must_use]
    pub fn consulta(&self) -> Option<EndpointConsulta> {
        match self {
            Self::Consulta(e) => Some(*e),
            Self::Other(_) => None,
        }
    }
}

impl From<EndpointConsulta> for EndpointRegistrado {
    fn from(e: EndpointConsulta) -> Self {
        Self::Consulta(e)
    }
}

impl From<&str> for EndpointRegistrado {
    /// The registered form as sent: a known one becomes [`EndpointRegistrado::Consulta`].
    fn from(s: &str) -> Self {
        EndpointConsulta::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .map_or_else(|| Self::Other(s.to_owned()), Self::Consulta)
    }
}

impl From<String> for EndpointRegistrado {
    fn from(s: String) -> Self {
        match Self::from(s.as_str()) {
            Self::Other(_) => Self::Other(s),
            known => known,
        }
    }
}

impl PartialEq<EndpointConsulta> for EndpointRegistrado {
    fn eq(&self, other: &EndpointConsulta) -> bool {
        *self == Self::Consulta(*other)
    }
}

impl PartialEq<str> for EndpointRegistrado {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for EndpointRegistrado {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for EndpointRegistrado {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EndpointRegistrado {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EndpointRegistrado {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::from(String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_registrado_round_trips_and_keeps_unknown_forms() {
        for e in EndpointConsulta::ALL {
            let r = EndpointRegistrado::from(e);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", e.as_str()));
            assert_eq!(
                serde_json::from_str::<EndpointRegistrado>(&json).unwrap(),
                e
            );
        }
        for e in EndpointConsulta::ALL {
            assert_eq!(EndpointConsulta::from_name(e.name()), Some(e));
            assert_eq!(
                e.route()
                    .replace("{codigoCar}", "{codigo}")
                    .replace("{cpfCnpj}", "{cpf_cnpj}"),
                e.as_str(),
                "the route template and the registered form name the same path"
            );
        }
        let unknown: EndpointRegistrado = serde_json::from_str("\"/v1/novo\"").unwrap();
        assert_eq!(unknown, EndpointRegistrado::Other("/v1/novo".into()));
        assert_eq!(unknown.consulta(), None);
    }

    #[test]
    fn the_serde_names_and_the_short_names_are_the_tables() {
        for e in EndpointConsulta::ALL {
            assert_eq!(
                serde_json::to_string(&e).unwrap(),
                format!("\"{}\"", e.as_str()),
                "the serde rename of {e:?} is its registered form"
            );
            assert_eq!(e.short_name().parse::<EndpointConsulta>(), Ok(e));
            assert_eq!(e.as_str().parse::<EndpointConsulta>(), Ok(e));
        }
        assert_eq!(EndpointConsulta::CarCompleto.short_name(), "completo");
        assert_eq!("basico".parse(), Ok(EndpointConsulta::CarBasico));
        assert!("geometria".parse::<EndpointConsulta>().is_err());
    }
}
