//! The SDK's models as plain Python values: dicts with the contract's camelCase keys, exactly as
//! the API sends them (docs/contrato.md, "Schemas"), with two typed helpers:
//!
//! - money and other `Decimal` fields (`saldoReais`, prices, `valorCobrado`, `percentualBonus`,
//!   …) as `decimal.Decimal`: they are the only JSON numbers the models write as non-integers
//!   (the SDK never holds money as `f64`; the wire carries it as a JSON number);
//! - the contract's timestamps (`dataConsulta`, `dataExpiracao`, `data`, `dataConfirmacao`) as
//!   timezone-aware `datetime`.
//!
//! The registry's own strings (`dados.areaTotalHa`, `dados.dataCadastro`, coordinates) stay the
//! strings the registry sent.

use std::str::FromStr;

use chrono::{DateTime, FixedOffset};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::Value;

/// Keys of the contract's ISO 8601 date-time fields (the SDK's `DateTime<FixedOffset>` fields).
const TIMESTAMPS: [&str; 4] = ["dataConsulta", "dataExpiracao", "data", "dataConfirmacao"];

/// `value` (an SDK model) as a Python dict/list/scalar (see the module docs).
pub(crate) fn to_py<'py, T: Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    json_to_py(py, None, &json)
}

fn json_to_py<'py>(py: Python<'py>, key: Option<&str>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => number(py, n)?,
        Value::String(s) => match key {
            Some(k) if TIMESTAMPS.contains(&k) => {
                match DateTime::<FixedOffset>::parse_from_rfc3339(s) {
                    Ok(dt) => dt.into_pyobject(py)?.into_any(),
                    Err(_) => s.into_pyobject(py)?.into_any(),
                }
            }
            _ => s.into_pyobject(py)?.into_any(),
        },
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, None, item)?)?;
            }
            list.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (k, item) in fields {
                dict.set_item(k, json_to_py(py, Some(k), item)?)?;
            }
            dict.into_any()
        }
    })
}

/// Integers stay `int`; the non-integer numbers the models write are `Decimal` fields.
fn number<'py>(py: Python<'py>, n: &serde_json::Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(i) = n.as_i64() {
        return Ok(i.into_pyobject(py)?.into_any());
    }
    if let Some(u) = n.as_u64() {
        return Ok(u.into_pyobject(py)?.into_any());
    }
    decimal(py, decimal_from_json(n)?)
}

/// The decimal a model's `Decimal` field was: the shortest text that reads back as the same
/// JSON number (what `rust_decimal::serde::float` wrote), with at least the 2 places of BRL.
pub(crate) fn decimal_from_json(n: &serde_json::Number) -> PyResult<Decimal> {
    let d = Decimal::from_str(&n.to_string())
        .or_else(|_| Decimal::from_scientific(&n.to_string()))
        .map_err(|e| PyValueError::new_err(format!("número {n}: {e}")))?;
    Ok(brl(d))
}

/// `d` with at least the 2 decimal places of BRL (`Decimal('1.00')`, not `Decimal('1')`).
pub(crate) fn brl(mut d: Decimal) -> Decimal {
    if d.scale() < 2 {
        d.rescale(2);
    }
    d
}

/// A `rust_decimal::Decimal` as `decimal.Decimal`.
pub(crate) fn decimal(py: Python<'_>, d: Decimal) -> PyResult<Bound<'_, PyAny>> {
    Ok(d.into_pyobject(py)?.into_any())
}

/// An amount in BRL from Python: `decimal.Decimal`, `int` or `str` (`"12.50"`); a `float` is
/// refused (money is never binary floating point).
pub(crate) fn money(value: &Bound<'_, PyAny>) -> PyResult<Decimal> {
    if value.is_instance_of::<pyo3::types::PyFloat>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "valor em reais como float: use decimal.Decimal, int ou str",
        ));
    }
    let text = value.str()?.to_string();
    Decimal::from_str(text.trim())
        .map_err(|_| PyValueError::new_err(format!("valor em reais inválido: {text:?}")))
}
