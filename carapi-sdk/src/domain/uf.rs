//! Brazil's 27 federative units: the two-letter code, the IBGE code and the full name.
//!
//! Source: IBGE state list (`estados.csv`). The CAR code's UF must match the first two digits of
//! its IBGE municipality code (docs/dominio.md "CAR code").

/// `(sigla, IBGE code, full name)` for every UF, ordered by IBGE code.
pub const UFS: [(&str, u8, &str); 27] = [
    ("RO", 11, "Rondônia"),
    ("AC", 12, "Acre"),
    ("AM", 13, "Amazonas"),
    ("RR", 14, "Roraima"),
    ("PA", 15, "Pará"),
    ("AP", 16, "Amapá"),
    ("TO", 17, "Tocantins"),
    ("MA", 21, "Maranhão"),
    ("PI", 22, "Piauí"),
    ("CE", 23, "Ceará"),
    ("RN", 24, "Rio Grande do Norte"),
    ("PB", 25, "Paraíba"),
    ("PE", 26, "Pernambuco"),
    ("AL", 27, "Alagoas"),
    ("SE", 28, "Sergipe"),
    ("BA", 29, "Bahia"),
    ("MG", 31, "Minas Gerais"),
    ("ES", 32, "Espírito Santo"),
    ("RJ", 33, "Rio de Janeiro"),
    ("SP", 35, "São Paulo"),
    ("PR", 41, "Paraná"),
    ("SC", 42, "Santa Catarina"),
    ("RS", 43, "Rio Grande do Sul"),
    ("MS", 50, "Mato Grosso do Sul"),
    ("MT", 51, "Mato Grosso"),
    ("GO", 52, "Goiás"),
    ("DF", 53, "Distrito Federal"),
];

/// The IBGE code of a UF given by its two-letter code (`"DF"` -> `Some(53)`).
#[must_use]
pub fn codigo_ibge(sigla: &str) -> Option<u8> {
    UFS.iter().find(|(s, _, _)| *s == sigla).map(|(_, c, _)| *c)
}

/// The full name of a UF (`"MT"` -> `Some("Mato Grosso")`), as the contract's `uf` field carries it.
#[must_use]
pub fn nome(sigla: &str) -> Option<&'static str> {
    UFS.iter().find(|(s, _, _)| *s == sigla).map(|(_, _, n)| *n)
}

/// The two-letter code of a UF given by its IBGE code (`51` -> `Some("MT")`).
#[must_use]
pub fn sigla_of_codigo(codigo: u8) -> Option<&'static str> {
    UFS.iter()
        .find(|(_, c, _)| *c == codigo)
        .map(|(s, _, _)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_agree() {
        assert_eq!(codigo_ibge("DF"), Some(53));
        assert_eq!(nome("MT"), Some("Mato Grosso"));
        assert_eq!(sigla_of_codigo(42), Some("SC"));
        assert_eq!(codigo_ibge("ZZ"), None);
    }
}
