use chrono::{DateTime, FixedOffset, NaiveDateTime};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::domain::{br, dms};

/// CarDadosBasicos: the `dados` object of a basic CAR lookup (contract, "CarDadosBasicos").
///
/// Strings are exactly as the registry sends them; use the accessors for typed values.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CarDadosBasicos {
    /// CAR code, `UF-IIIIIII-<32 hex>`.
    pub codigo_car: String,
    /// Property name.
    #[serde(default)]
    pub nome_imovel: Option<String>,
    /// Total area in hectares, decimal comma with 4 decimals (`2,0131`).
    #[serde(default)]
    pub area_total_ha: Option<String>,
    /// Registration date, `dd/MM/yyyy HH:mm:ss` (Brasília time).
    #[serde(default)]
    pub data_cadastro: Option<String>,
    /// Land registry (matrícula) number.
    #[serde(default)]
    pub matricula_numero: Option<String>,
    /// Land registry (matrícula) date.
    #[serde(default)]
    pub matricula_data: Option<String>,
    /// Registry office (cartório) of the matrícula.
    #[serde(default)]
    pub matricula_cartorio: Option<String>,
    /// Property type (`IRU`, `AST`, `PCT`).
    #[serde(default)]
    pub tipo_imovel: Option<String>,
    /// Municipality name.
    #[serde(default)]
    pub municipio: Option<String>,
    /// State name written out in full (`Distrito Federal`).
    #[serde(default)]
    pub uf: Option<String>,
    /// Registration protocol code.
    #[serde(default)]
    pub codigo_protocolo: Option<String>,
    /// Centroid latitude in DMS (`15°47'38,00 S`).
    #[serde(default)]
    pub latitude: Option<String>,
    /// Centroid longitude in DMS (`47°52'58,00 O`).
    #[serde(default)]
    pub longitude: Option<String>,
    /// Fiscal modules, decimal comma with 4 decimals.
    #[serde(default)]
    pub modulos_fiscais: Option<String>,
}

impl CarDadosBasicos {
    /// `areaTotalHa` in hectares; `None` when null or not a decimal-comma number.
    #[must_use]
    pub fn area_total(&self) -> Option<Decimal> {
        br::parse_decimal(self.area_total_ha.as_deref()?).ok()
    }

    /// `modulosFiscais` as a number; `None` when null or not a decimal-comma number.
    #[must_use]
    pub fn modulos(&self) -> Option<Decimal> {
        br::parse_decimal(self.modulos_fiscais.as_deref()?).ok()
    }

    /// `dataCadastro` as a local Brasília date-time; `None` when null or malformed.
    #[must_use]
    pub fn data_cadastro_datetime(&self) -> Option<NaiveDateTime> {
        br::parse_data(self.data_cadastro.as_deref()?).ok()
    }

    /// `latitude` in decimal degrees (negative south); `None` when null or malformed.
    #[must_use]
    pub fn latitude_degrees(&self) -> Option<Decimal> {
        dms::parse(self.latitude.as_deref()?).ok()
    }

    /// `longitude` in decimal degrees (negative west); `None` when null or malformed.
    #[must_use]
    pub fn longitude_degrees(&self) -> Option<Decimal> {
        dms::parse(self.longitude.as_deref()?).ok()
    }
}

/// CarDadosCompletos: every field of [`CarDadosBasicos`] plus the owners (contract,
/// "CarDadosCompletos"). Dereferences to the basic fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CarDadosCompletos {
    /// The basic fields, flattened on the wire.
    #[serde(flatten)]
    pub basicos: CarDadosBasicos,
    /// Owner names separated by commas.
    #[serde(default)]
    pub proprietarios_nomes: Option<String>,
    /// Formatted owner documents separated by commas, in the order of the names.
    #[serde(default)]
    pub proprietarios_cpfs: Option<String>,
}

impl CarDadosCompletos {
    /// Owners as `(name, document)` pairs, split on the commas of the two fields.
    #[must_use]
    pub fn proprietarios(&self) -> Vec<(String, String)> {
        let split = |s: &Option<String>| -> Vec<String> {
            s.as_deref()
                .map(|s| {
                    s.split(',')
                        .map(|p| p.trim().to_owned())
                        .filter(|p| !p.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        split(&self.proprietarios_nomes)
            .into_iter()
            .zip(split(&self.proprietarios_cpfs))
            .collect()
    }
}

impl std::ops::Deref for CarDadosCompletos {
    type Target = CarDadosBasicos;
    fn deref(&self) -> &CarDadosBasicos {
        &self.basicos
    }
}

/// CarResponse: the 200 body of `GET /v1/car/{codigoCar}` (`T` = [`CarDadosBasicos`]) and of
/// `GET /v1/car/{codigoCar}/completo` (`T` = [`CarDadosCompletos`]) (contract, "CarResponse").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CarResponse<T> {
    /// Always true.
    pub success: bool,
    /// Present and true only for reserved sandbox values.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub sandbox: bool,
    /// True when the record was already consolidated in the internal base (still charged).
    #[serde(default)]
    pub cache: bool,
    /// The record.
    pub dados: T,
    /// Time of the lookup.
    #[serde(with = "super::timestamp")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub data_consulta: DateTime<FixedOffset>,
    /// Last update of the record in the origin base; `None` when not informed.
    #[serde(default, with = "super::timestamp::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub data_expiracao: Option<DateTime<FixedOffset>>,
}

/// A downloaded receipt PDF (`GET /v1/car/{codigoCar}/recibo`, contract "Lookup rules" 3).
#[derive(Clone, PartialEq, Eq)]
pub struct Recibo {
    /// File name from `Content-Disposition` (`<codigoCar>.pdf`).
    pub filename: String,
    /// The PDF bytes (start with `%PDF-`).
    pub bytes: bytes::Bytes,
}

impl std::fmt::Debug for Recibo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recibo")
            .field("filename", &self.filename)
            .field("len", &self.bytes.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_complete_with_unknown_fields_and_accessors() {
        let json = r#"{"success":true,"cache":false,"dataConsulta":"2026-11-21T10:00:00","dataExpiracao":null,
          "dados":{"codigoCar":"DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47","areaTotalHa":"2,0131",
          "dataCadastro":"09/05/2014 17:16:10","latitude":"15°47'38,00 S","longitude":"47°52'58,00\" O",
          "modulosFiscais":"0,4026","proprietariosNomes":"Fulano de Tal, Beltrana Exemplo",
          "proprietariosCpfs":"529.982.247-25, 111.444.777-35","novoCampo":42}}"#;
        let r: CarResponse<CarDadosCompletos> = serde_json::from_str(json).unwrap();
        assert_eq!(r.dados.area_total(), Some(Decimal::new(20131, 4)));
        assert_eq!(r.dados.modulos(), Some(Decimal::new(4026, 4)));
        assert!(r.dados.latitude_degrees().unwrap().is_sign_negative());
        assert!(r.dados.longitude_degrees().unwrap() < Decimal::from(-47));
        assert_eq!(
            r.dados.data_cadastro_datetime().unwrap().to_string(),
            "2014-05-09 17:16:10"
        );
        assert_eq!(r.dados.proprietarios()[1].1, "111.444.777-35");
        assert!(!r.sandbox);
        let back = serde_json::to_value(&r).unwrap();
        assert!(back.get("sandbox").is_none());
        assert_eq!(
            back["dados"]["codigoCar"],
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
        );
    }
}
