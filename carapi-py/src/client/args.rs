//! Python arguments of `Client`'s methods as the SDK's parameter types.

use std::str::FromStr;
use std::time::Duration;

use carapi_sdk::{EndpointConsulta, HistoricoParams, RecargaStatus, StatusConsulta, Uuid};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

fn lookup_status(s: Option<&str>) -> PyResult<Option<StatusConsulta>> {
    match s.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(None),
        Some("sucesso") => Ok(Some(StatusConsulta::Sucesso)),
        Some("erro") => Ok(Some(StatusConsulta::Erro)),
        Some(outro) => Err(PyValueError::new_err(format!(
            "status inválido: {outro:?} (sucesso ou erro)"
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
        status: lookup_status(status)?,
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
