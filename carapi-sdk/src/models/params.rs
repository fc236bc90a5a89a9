use serde::{Deserialize, Serialize};

use super::{EndpointConsulta, RecargaStatus};

/// `status` filter of the history: `sucesso` (HTTP 200) or `erro` (any other status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum StatusConsulta {
    /// HTTP 200.
    Sucesso,
    /// Any other status.
    Erro,
}

/// Query of `GET /v1/historico`. Every field is optional; `None` is not sent.
/// `page` is 1-based (minimum 1, default 1); `size` defaults to 20 and is reduced to 100.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase")]
pub struct HistoricoParams {
    /// 1-based page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Page size, 1 to 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// Substring of `chaveConsulta` or `endpoint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busca: Option<String>,
    /// Exact endpoint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointConsulta>,
    /// Success or error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusConsulta>,
}

/// Query of `GET /v1/recargas`. `page` 1-based; `size` defaults to 20, reduced to 100.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase")]
pub struct RecargasParams {
    /// 1-based page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Page size, 1 to 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// Only top-ups in this state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<RecargaStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn historico_query_serialisation() {
        assert_eq!(
            serde_urlencoded::to_string(HistoricoParams::default()).unwrap(),
            ""
        );
        let p = HistoricoParams {
            page: Some(2),
            size: Some(50),
            busca: Some("DF-53".into()),
            endpoint: Some(EndpointConsulta::CarCompleto),
            status: Some(StatusConsulta::Erro),
        };
        assert_eq!(
            serde_urlencoded::to_string(&p).unwrap(),
            "page=2&size=50&busca=DF-53&endpoint=%2Fv1%2Fcar%2F%7Bcodigo%7D%2Fcompleto&status=erro"
        );
    }

    #[test]
    fn recargas_query_serialisation() {
        let p = RecargasParams {
            page: None,
            size: Some(100),
            status: Some(RecargaStatus::Pendente),
        };
        assert_eq!(
            serde_urlencoded::to_string(&p).unwrap(),
            "size=100&status=Pendente"
        );
    }
}
