//! [`carapi_sdk::Error`] as the exceptions of `carapi.erros` (carapi-py/python/carapi/erros.py).
//!
//! | SDK error | exception |
//! |---|---|
//! | `Api` 400 / local `Validation` | `EntradaInvalida` |
//! | `Api` 401 | `TokenInvalido` |
//! | `Api` 402 | `SaldoInsuficiente` |
//! | `Api` 404 | `NaoEncontrado` |
//! | `Api` 429 | `LimiteExcedido` (`retry_after` in seconds, `limite`: `taxa`/`diario`/`mensal`) |
//! | `Api` other, `Decode` | `ApiError` |
//! | `Transport`, answer of a charged lookup lost after sending | `RespostaPerdida` (never re-sent) |
//! | `Transport`, other | `ErroDeRede` |
//! | `SpendLimit` | `LimiteDeGasto` |
//! | `Timeout` (`aguardar_recarga`) | `TempoEsgotado` |
//! | `Config` | `ConfiguracaoInvalida` |
//! | `Io` | `OSError` |

use carapi_sdk::Error;
use carapi_sdk::domain::ValidationError;
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exception for `e`, with the attributes the SDK's error carries.
pub(crate) fn para_py(py: Python<'_>, e: Error) -> PyErr {
    if let Error::Io(io) = e {
        return PyOSError::new_err(io.to_string());
    }
    match construir(py, &e) {
        Ok(err) => err,
        Err(falha) => PyRuntimeError::new_err(format!("{e} (carapi.erros: {falha})")),
    }
}

fn construir(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let kw = PyDict::new(py);
    kw.set_item("status", e.status())?;
    kw.set_item("may_have_charged", e.may_have_charged())?;
    kw.set_item("is_retryable", e.is_retryable())?;
    kw.set_item("sandbox", e.is_sandbox())?;
    let (classe, mensagem) = classificar(py, e, &kw)?;
    let modulo = py.import("carapi.erros")?;
    let exc = modulo.getattr(classe)?.call((mensagem,), Some(&kw))?;
    Ok(PyErr::from_value(exc))
}

/// The exception class name and its message; fills `kw` with the variant's attributes.
fn classificar(
    py: Python<'_>,
    e: &Error,
    kw: &Bound<'_, PyDict>,
) -> PyResult<(&'static str, String)> {
    Ok(match e {
        Error::Api(api) => {
            kw.set_item("codigo", api.code.as_str())?;
            kw.set_item("operacao", api.operation)?;
            kw.set_item("detalhes", e.to_string())?;
            let classe = match api.status {
                400 => "EntradaInvalida",
                401 => "TokenInvalido",
                402 => "SaldoInsuficiente",
                404 => "NaoEncontrado",
                429 => {
                    kw.set_item("retry_after", api.retry_after.map(|d| d.as_secs_f64()))?;
                    kw.set_item("limite", api.limite.map(|l| l.as_str()))?;
                    "LimiteExcedido"
                }
                _ => "ApiError",
            };
            (classe, api.message.clone())
        }
        Error::Validation(v) => {
            kw.set_item("codigo", codigo_validacao(v))?;
            ("EntradaInvalida", v.to_string())
        }
        Error::Transport { operation, .. } => {
            kw.set_item("operacao", *operation)?;
            let classe = if e.may_have_charged() {
                "RespostaPerdida"
            } else {
                "ErroDeRede"
            };
            (classe, e.to_string())
        }
        Error::Decode { operation, .. } => {
            kw.set_item("operacao", *operation)?;
            kw.set_item("codigo", "RESPOSTA_INESPERADA")?;
            ("ApiError", e.to_string())
        }
        Error::SpendLimit {
            limite,
            gasto,
            reservado,
            preco,
        } => {
            kw.set_item("limite", *limite)?;
            kw.set_item("gasto", *gasto)?;
            kw.set_item("reservado", *reservado)?;
            kw.set_item("preco", *preco)?;
            ("LimiteDeGasto", e.to_string())
        }
        Error::Timeout {
            recarga_id,
            last_status,
            ..
        } => {
            kw.set_item("recarga_id", recarga_id.to_string())?;
            kw.set_item("ultimo_status", last_status.map(|s| s.as_str()))?;
            ("TempoEsgotado", e.to_string())
        }
        Error::Config(_) => ("ConfiguracaoInvalida", e.to_string()),
        _ => {
            let _ = py;
            ("ApiError", e.to_string())
        }
    })
}

/// The contract code the server gives the same mistake (docs/contrato.md, "Error codes").
fn codigo_validacao(v: &ValidationError) -> &'static str {
    match v {
        ValidationError::CodigoCar(_) => "CODIGO_CAR_INVALIDO",
        ValidationError::CpfCnpj(_) => "CPF_CNPJ_INVALIDO",
        _ => "ENTRADA_INVALIDA",
    }
}
