//! What `carapi.lote` (python/carapi/lote.py and its helpers) reads from the SDK instead of
//! writing it again: the table of the charged lookups (`carapi_sdk::EndpointConsulta`), the
//! Portuguese column titles (`carapi_sdk::labels`), the state and municipality a CAR code
//! names, the records of a batch's output read back as the package's values, a handle whose
//! calls a cancellation stops, and how many keys the archive already answers.

use std::str::FromStr;

use carapi_sdk::{CodigoCar, EndpointConsulta, Precos};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::cancel::CancelToken;
use crate::client::Client;
use crate::conv;

/// The charged lookups (`EndpointConsulta::ALL`), one dict each: `nome` (the SDK's and the
/// client's method name, which the archive stores), `curto` (the last fixed segment of the
/// route: `car`, `completo`, `recibo`, `proprietario`, the `consulta=` of `lote`), `rota` (the
/// route template), `registrada` (the history's form), `sandbox` (its reserved values),
/// `codigo_car` (whether its key is a CAR code) and `campo_preco` (its field in `precos()`).
pub(crate) fn consultas(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    let prices =
        serde_json::to_value(Precos::ATUAIS).map_err(|e| PyValueError::new_err(e.to_string()))?;
    for e in EndpointConsulta::ALL {
        let d = PyDict::new(py);
        d.set_item("nome", e.name())?;
        let short = e
            .route()
            .rsplit('/')
            .find(|s| !s.starts_with('{'))
            .unwrap_or(e.name());
        d.set_item("curto", short)?;
        d.set_item("rota", e.route())?;
        d.set_item("registrada", e.as_str())?;
        d.set_item("sandbox", e.sandbox_values().to_vec())?;
        d.set_item("codigo_car", e.takes_codigo_car())?;
        d.set_item("campo_preco", price_field(&prices, Precos::ATUAIS.preco(e)))?;
        list.append(d)?;
    }
    Ok(list)
}

/// The field of `Precos` (serialised as `prices`) holding `price`: the current table's prices
/// are all different, so each names one field.
fn price_field(prices: &serde_json::Value, price: rust_decimal::Decimal) -> Option<String> {
    let wanted = rust_decimal::prelude::ToPrimitive::to_f64(&price)?;
    prices
        .as_object()?
        .iter()
        .find(|(_, v)| v.as_f64() == Some(wanted))
        .map(|(k, _)| k.clone())
}

/// Every field's Portuguese title (`carapi_sdk::labels::TITLES`), `{field: title}`.
pub(crate) fn titles(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (field, title) in carapi_sdk::labels::TITLES {
        d.set_item(field, title)?;
    }
    Ok(d)
}

/// The two-letter state of a CAR code (`CodigoCar::uf`), read as people paste it; `None` for a
/// sandbox code or anything that is not a code.
#[pyfunction(name = "sigla_uf")]
pub(crate) fn state_of(codigo: &str) -> Option<String> {
    CodigoCar::parse_pasted(codigo)
        .ok()
        .filter(|c| !c.is_sandbox())
        .map(|c| c.uf().to_owned())
}

/// The 7-digit IBGE municipality code a CAR code embeds (`CodigoCar::municipio_ibge`), as text
/// (`"5300108"`); `None` for a sandbox code or anything that is not a code.
#[pyfunction(name = "municipio_ibge")]
pub(crate) fn municipality_of(codigo: &str) -> Option<String> {
    CodigoCar::parse_pasted(codigo)
        .ok()
        .and_then(|c| c.municipio_ibge())
        .map(|m| format!("{m:07}"))
}

/// A JSON text (a record of a batch's output) as the package's values: dicts and lists, money
/// and other non-integers as `Decimal`, the contract's timestamps as aware `datetime`.
///
/// # Errors
/// `ValueError` when `text` is not JSON.
#[pyfunction(name = "de_json")]
pub(crate) fn from_json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    conv::to_py(py, &value)
}

/// A handle on `client` whose calls not yet sent give up with `Cancelado` once `token` is
/// cancelled (`carapi_sdk::Client::with_cancel`); a call already sent runs to its end.
#[pyfunction(name = "com_cancelamento")]
pub(crate) fn with_cancel(client: &Client, token: &CancelToken) -> Client {
    client.with_cancel(token)
}

/// How many of `chaves` (canonical keys) the archive of `client` answers now for `consulta`
/// (its SDK name, `nome` of [`consultas`]) under its policy; 0 without an archive.
///
/// # Errors
/// `ValueError` for an unknown `consulta`; `ErroDeAcervo` when the archive cannot be read.
#[pyfunction(name = "no_acervo")]
pub(crate) fn in_archive(
    py: Python<'_>,
    client: &Client,
    consulta: &str,
    chaves: Vec<String>,
) -> PyResult<usize> {
    let e = EndpointConsulta::from_name(consulta)
        .or_else(|| EndpointConsulta::from_str(consulta).ok())
        .ok_or_else(|| PyValueError::new_err(format!("consulta desconhecida: {consulta:?}")))?;
    client.fresh_in_archive(py, e, chaves)
}
