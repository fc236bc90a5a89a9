//! The SDK's parsers of the registry's Brazilian strings and its local validation, for
//! `carapi.lote`'s data frames and for callers that check keys before a batch.

use carapi_sdk::domain::{br, dms};
use carapi_sdk::{CodigoCar, CpfCnpj, sandbox};
use chrono::NaiveDateTime;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rust_decimal::Decimal;

use crate::errors;

/// A registry decimal with a decimal comma (`"20,1310"`, `"1.234,5"`) as `Decimal`; `None`
/// when it is not one (`carapi_sdk::domain::br::parse_decimal`).
#[pyfunction]
pub(crate) fn parse_decimal(text: &str) -> Option<Decimal> {
    br::parse_decimal(text).ok()
}

/// A registry date-time (`"21/11/2026 10:00:00"`) as a naive `datetime`: a Brasília wall time
/// (`America/Sao_Paulo`; `carapi.lote` attaches the zone); `None` when malformed
/// (`carapi_sdk::domain::br::parse_data`).
#[pyfunction]
pub(crate) fn parse_data(text: &str) -> Option<NaiveDateTime> {
    br::parse_data(text).ok()
}

/// A registry coordinate in degrees, minutes and seconds (`15°47'56,123" S`) as decimal
/// degrees, negative south and west; `None` when malformed (`carapi_sdk::domain::dms::parse`).
#[pyfunction]
pub(crate) fn parse_dms(text: &str) -> Option<Decimal> {
    dms::parse(text).ok()
}

/// The CAR code in canonical form, read as a person pastes it (`CodigoCar::parse_pasted`:
/// case, dots, spaces or en/em dashes for the dashes, no dashes).
///
/// # Errors
/// `EntradaInvalida` (`CODIGO_CAR_INVALIDO`) when malformed.
#[pyfunction(name = "validar_codigo_car")]
pub(crate) fn check_codigo_car(py: Python<'_>, codigo: &str) -> PyResult<String> {
    CodigoCar::parse_pasted(codigo)
        .map(|c| c.as_str().to_owned())
        .map_err(|e| errors::to_py(py, e.into()))
}

/// The CPF/CNPJ as bare digits (`CpfCnpj::parse`: mask removed, check digits verified).
///
/// # Errors
/// `EntradaInvalida` (`CPF_CNPJ_INVALIDO`) when malformed.
#[pyfunction(name = "validar_documento")]
pub(crate) fn check_documento(py: Python<'_>, documento: &str) -> PyResult<String> {
    CpfCnpj::parse(documento)
        .map(|c| c.as_str().to_owned())
        .map_err(|e| errors::to_py(py, e.into()))
}

/// The contract's reserved sandbox values (`carapi_sdk::sandbox`), by constant name.
pub(crate) fn sandbox_values(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("CAR_BASICO", sandbox::CAR_BASICO)?;
    d.set_item("CAR_NAO_EXISTE", sandbox::CAR_NAO_EXISTE)?;
    d.set_item("CAR_SEM_SALDO", sandbox::CAR_SEM_SALDO)?;
    d.set_item("CPF_DOIS_CARS", sandbox::CPF_DOIS_CARS)?;
    d.set_item("CNPJ_TRUNCADO", sandbox::CNPJ_TRUNCADO)?;
    d.set_item("CPF_NAO_ENCONTRADO", sandbox::CPF_NAO_ENCONTRADO)?;
    Ok(d)
}
