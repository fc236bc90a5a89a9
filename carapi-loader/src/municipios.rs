//! Brazil's 5,571 municipalities and 27 states from the IBGE lists bundled in
//! `carapi-loader/data/ibge/` (MIT, see the LICENSE there), embedded at compile time.
//!
//! Used to place CAR records at their municipality's centroid (the coordinates the reference data
//! gives every record, docs/dominio.md "Data") and to pick real municipality codes for synthetic data.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::LazyLock;

use rust_decimal::Decimal;
use serde::Deserialize;

const MUNICIPIOS_CSV: &str = include_str!("../data/ibge/municipios.csv");
#[cfg(test)]
const STATES_CSV: &str = include_str!("../data/ibge/estados.csv");

/// One IBGE municipality (`data/ibge/municipios.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Municipio {
    /// 7-digit IBGE municipality code (`5300108` for Brasília).
    pub(crate) codigo_ibge: u32,
    /// Official name, with accents (`"Brasília"`).
    pub(crate) nome: String,
    /// Centroid (seat) latitude, decimal degrees, negative south.
    pub latitude: Decimal,
    /// Centroid (seat) longitude, decimal degrees, negative west.
    pub longitude: Decimal,
    /// True for state capitals.
    pub(crate) capital: bool,
    /// 2-digit IBGE code of the state (`53` for DF); the first two digits of `codigo_ibge`.
    pub(crate) codigo_uf: u8,
    /// The state, from its IBGE code.
    pub(crate) uf: carapi_service::dados::Uf,
}

#[cfg(test)]
/// One IBGE state (`data/ibge/estados.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uf {
    /// 2-digit IBGE state code (`53`).
    pub(crate) codigo_uf: u8,
    /// Two-letter code (`"DF"`).
    pub(crate) code: String,
    /// Full name (`"Distrito Federal"`).
    pub(crate) nome: String,
    /// Region (`"Centro-Oeste"`).
    pub(crate) region: String,
}

#[derive(Deserialize)]
struct MunicipioRow {
    codigo_ibge: u32,
    nome: String,
    latitude: String,
    longitude: String,
    capital: u8,
    codigo_uf: u8,
}

#[cfg(test)]
#[derive(Deserialize)]
struct StateRow {
    codigo_uf: u8,
    uf: String,
    nome: String,
    #[serde(rename = "regiao")]
    region: String,
}

static MUNICIPIOS: LazyLock<BTreeMap<u32, Municipio>> = LazyLock::new(|| {
    csv::Reader::from_reader(MUNICIPIOS_CSV.as_bytes())
        .deserialize::<MunicipioRow>()
        .map(|line| {
            let l = line.expect("data/ibge/municipios.csv: linha malformada");
            let degree = |s: &str| {
                Decimal::from_str(s).expect("data/ibge/municipios.csv: coordenada malformada")
            };
            let m = Municipio {
                codigo_ibge: l.codigo_ibge,
                latitude: degree(&l.latitude),
                longitude: degree(&l.longitude),
                nome: l.nome,
                capital: l.capital == 1,
                codigo_uf: l.codigo_uf,
                uf: carapi_sdk::domain::uf::sigla_of_codigo(l.codigo_uf)
                    .and_then(carapi_service::dados::Uf::parse)
                    .expect("data/ibge/municipios.csv: código de UF desconhecido"),
            };
            (m.codigo_ibge, m)
        })
        .collect()
});

#[cfg(test)]
static STATES: LazyLock<BTreeMap<u8, Uf>> = LazyLock::new(|| {
    // The file starts with a UTF-8 byte-order mark, which would otherwise be part of the first
    // header name.
    let text = STATES_CSV.strip_prefix('\u{feff}').unwrap_or(STATES_CSV);
    csv::Reader::from_reader(text.as_bytes())
        .deserialize::<StateRow>()
        .map(|line| {
            let l = line.expect("data/ibge/estados.csv: linha malformada");
            (
                l.codigo_uf,
                Uf {
                    codigo_uf: l.codigo_uf,
                    code: l.uf,
                    nome: l.nome,
                    region: l.region,
                },
            )
        })
        .collect()
});

/// The municipality with IBGE code `codigo` (7 digits), if it exists.
pub fn by_code(codigo: u32) -> Option<&'static Municipio> {
    MUNICIPIOS.get(&codigo)
}

/// Every municipality, ordered by IBGE code (5,571 of them).
pub(crate) fn all() -> impl ExactSizeIterator<Item = &'static Municipio> {
    MUNICIPIOS.values()
}

#[cfg(test)]
/// The state with IBGE code `codigo_uf` (2 digits), if it exists.
pub(crate) fn state_of(codigo_uf: u8) -> Option<&'static Uf> {
    STATES.get(&codigo_uf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brasilia_e_o_centroide_do_registro_do_sandbox() {
        let m = by_code(5300108).expect("Brasília");
        assert_eq!(
            (m.latitude, m.longitude),
            (Decimal::new(-157_795, 4), Decimal::new(-479_297, 4))
        );
    }
    use carapi_sdk::domain::uf;

    #[test]
    fn carrega_todos_os_municipios() {
        assert_eq!(all().len(), 5571);
        let brasilia = by_code(5300108).expect("Brasília");
        assert_eq!(brasilia.nome, "Brasília");
        assert_eq!(brasilia.uf.as_str(), "DF");
        assert!(brasilia.capital);
        assert_eq!(by_code(5107925).map(|m| m.nome.as_str()), Some("Sorriso"));
        assert!(by_code(9999999).is_none());
    }

    #[test]
    fn codigo_uf_bate_com_os_dois_primeiros_digitos() {
        for m in all() {
            assert_eq!(
                m.codigo_ibge / 100_000,
                u32::from(m.codigo_uf),
                "{}",
                m.nome
            );
            assert!(uf::sigla_of_codigo(m.codigo_uf).is_some(), "{}", m.nome);
            assert!(m.latitude > Decimal::from(-34) && m.latitude < Decimal::from(6));
            assert!(m.longitude > Decimal::from(-74) && m.longitude < Decimal::from(-28));
        }
    }

    #[test]
    fn estados_concordam_com_a_tabela_do_sdk() {
        for (code, codigo, nome) in uf::UFS {
            let e = state_of(codigo).expect(code);
            assert_eq!(e.code, code);
            assert_eq!(e.nome, nome);
        }
        assert_eq!(
            state_of(53).map(|e| e.region.as_str()),
            Some("Centro-Oeste")
        );
    }
}
