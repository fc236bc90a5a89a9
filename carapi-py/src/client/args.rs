//! Python arguments of `Client`'s methods as the SDK's parameter types.

use std::str::FromStr;
use std::time::Duration;

use carapi_sdk::{EndpointConsulta, HistoricoParams, RecargaStatus, StatusConsulta, Uuid};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;

/// The base URL and the API key of `Client(...)`: the arguments, else `CARAPI_BASE_URL` and
/// `CARAPI_API_KEY`.
///
/// # Errors
/// `ConfiguracaoInvalida` naming the argument and the variable when one is missing or blank,
/// and for a base URL that ends in `/v1` (the client adds it: `http://host/v1` would send
/// `GET /v1/v1/saldo`).
pub(crate) fn connection(
    py: Python<'_>,
    base_url: Option<String>,
    api_key: Option<String>,
) -> PyResult<(String, String)> {
    let given = |v: Option<String>, var: &str| {
        v.or_else(|| std::env::var(var).ok())
            .filter(|s| !s.trim().is_empty())
    };
    let invalid = |text: String| errors::to_py(py, carapi_sdk::Error::Config(text));
    let base = given(base_url, carapi_sdk::ENV_BASE_URL).ok_or_else(|| {
        invalid(format!(
            "URL base não definida: passe base_url=\"http://...\" a carapi.Client ou defina {}",
            carapi_sdk::ENV_BASE_URL
        ))
    })?;
    let key = given(api_key, carapi_sdk::ENV_API_KEY).ok_or_else(|| {
        invalid(format!(
            "chave de API não definida: passe api_key=\"...\" a carapi.Client ou defina {}",
            carapi_sdk::ENV_API_KEY
        ))
    })?;
    if let Some(service) = base.trim().trim_end_matches('/').strip_suffix("/v1") {
        return Err(invalid(format!(
            "base_url {:?} termina em /v1: dê o endereço do serviço sem /v1 ({service:?}); o cliente acrescenta /v1 a cada chamada",
            base.trim(),
        )));
    }
    Ok((base, key))
}

/// `s` seconds as a `Duration`; `ValueError` names the argument when negative or not finite.
pub(crate) fn seconds(name: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| PyValueError::new_err(format!("{name} inválido: {s} s")))
}

/// A top-up id (`str` or `uuid.UUID`).
pub(crate) fn uuid(text: &Bound<'_, PyAny>) -> PyResult<Uuid> {
    let s = text.str()?.to_string();
    Uuid::parse_str(s.trim())
        .map_err(|_| PyValueError::new_err(format!("recarga_id inválido: {s:?}")))
}

fn endpoint(e: Option<&str>) -> PyResult<Option<EndpointConsulta>> {
    e.map(|s| EndpointConsulta::from_str(s).map_err(PyValueError::new_err))
        .transpose()
}

fn status_consulta(s: Option<&str>) -> PyResult<Option<StatusConsulta>> {
    match s.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(None),
        Some("sucesso") => Ok(Some(StatusConsulta::Sucesso)),
        Some("erro") => Ok(Some(StatusConsulta::Erro)),
        Some(other) => Err(PyValueError::new_err(format!(
            "status inválido: {other:?} (sucesso ou erro)"
        ))),
    }
}

/// A top-up status filter (`Pendente`, `Confirmado`, `Rejeitado`).
pub(crate) fn topup_status(s: Option<&str>) -> PyResult<Option<RecargaStatus>> {
    s.map(|s| RecargaStatus::from_str(s).map_err(PyValueError::new_err))
        .transpose()
}

/// `historico`'s query from Python's keyword arguments.
pub(crate) fn history_params(
    page: Option<u32>,
    size: Option<u32>,
    busca: Option<String>,
    endpoint_: Option<&str>,
    status: Option<&str>,
) -> PyResult<HistoricoParams> {
    Ok(HistoricoParams {
        page,
        size,
        busca,
        endpoint: endpoint(endpoint_)?,
        status: status_consulta(status)?,
    })
}

/// One field of `atualizar_limites`'s keywords: absent keeps, `None` removes, a value sets.
pub(crate) fn limit_field<'py, T>(
    fields: Option<&Bound<'py, PyDict>>,
    name: &str,
    conv: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<Option<T>>> {
    let Some(v) = fields.map(|c| c.get_item(name)).transpose()?.flatten() else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(Some(None));
    }
    conv(&v).map(|x| Some(Some(x)))
}

/// Refuses keywords of `atualizar_limites` other than `diario` and `mensal`.
pub(crate) fn check_limit_keys(fields: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    for k in fields.into_iter().flat_map(|c| c.keys()) {
        let k: String = k.extract()?;
        if k != "diario" && k != "mensal" {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "atualizar_limites: argumento desconhecido {k:?} (diario, mensal)"
            )));
        }
    }
    Ok(())
}
