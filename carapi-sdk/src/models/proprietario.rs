use serde::{Deserialize, Serialize};

/// ProprietarioResponse: the 200 body of `GET /v1/proprietario/{cpfCnpj}` (contract,
/// "ProprietarioResponse"; "Lookup rules" 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProprietarioResponse {
    /// Always true.
    pub success: bool,
    /// Present and true only for reserved sandbox values.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub sandbox: bool,
    /// Number of items in this response.
    pub total: u32,
    /// Ceiling of items per lookup (200).
    pub limite: u32,
    /// True when the document has more CARs than the ceiling.
    pub truncado: bool,
    /// The first 200 CARs of the document, ordered by CAR code.
    pub itens: Vec<ProprietarioItem>,
}

/// ProprietarioItem: one CAR tied to the looked-up document.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProprietarioItem {
    /// The CAR code.
    pub registro_car: String,
    /// Registration protocol code.
    #[serde(default)]
    pub codigo_protocolo: Option<String>,
    /// Property name.
    #[serde(default)]
    pub nome_imovel: Option<String>,
    /// Matrícula number.
    #[serde(default)]
    pub matricula_numero: Option<String>,
    /// Municipality name.
    #[serde(default)]
    pub municipio: Option<String>,
    /// State name written out in full.
    #[serde(default)]
    pub uf: Option<String>,
    /// Total area in hectares, decimal comma.
    #[serde(default)]
    pub area_total_ha: Option<String>,
    /// The document as it was looked up (formatted).
    #[serde(default)]
    pub proprietario_consultado: Option<String>,
}
