//! [`carapi_sdk::Error`] as the exceptions of `carapi.erros` (carapi-py/python/carapi/erros.py).
//!
//! | SDK error | exception | `codigo` |
//! |---|---|---|
//! | `Api` 400 / local `Validation` | `EntradaInvalida` | the contract's (`CODIGO_CAR_INVALIDO`, ...) |
//! | `Api` 401 | `TokenInvalido` | `TOKEN_INVALIDO` |
//! | `Api` 402 | `SaldoInsuficiente` (`preco`, `saldo`, `falta`: `Client::falta`) | `SALDO_INSUFICIENTE` |
//! | `Api` 404 | `NaoEncontrado` | the contract's |
//! | `Api` 429 | `LimiteExcedido` (`retry_after` in seconds, `limite`: `taxa`/`diario`/`mensal`) | `LIMITE_EXCEDIDO` |
//! | `Api` other, `Decode` | `ApiError` | the contract's; `RESPOSTA_INESPERADA` |
//! | `Transport`, answer of a charged lookup lost after sending | `RespostaPerdida` (never re-sent) | `RESPOSTA_PERDIDA` |
//! | `Transport`, other | `ErroDeRede` | `ERRO_DE_REDE` |
//! | `SpendLimit` | `LimiteDeGasto` | `LIMITE_DE_GASTO` |
//! | `Timeout` (`aguardar_recarga`) | `TempoEsgotado` | `TEMPO_ESGOTADO` |
//! | `Config` | `ConfiguracaoInvalida` | `CONFIGURACAO_INVALIDA` |
//! | `Cancelled` (a call of an `AsyncClient` task cancelled before it was sent) | `Cancelado` | `CANCELADO` |
//! | `Interrupted` (a purchase that ended without an answer) | `RespostaPerdida` (may have charged) | `RESPOSTA_PERDIDA` |
//! | `Archive` | `ErroDeAcervo` (`tipo`, `seq`, `expurgado_em`) | `ACERVO_ALTERADO` (an altered entry), `TITULAR_EXPURGADO` (a purged owner), `ACERVO` |
//! | `Io` | `OSError` | |
//!
//! The codes of the errors found before any answer are the package's own (the `Lote` rows
//! show the same codes); the others are the contract's (docs/contrato.md, "Errors").

use carapi_sdk::archive::ArchiveErrorKind;
use carapi_sdk::domain::ValidationError;
use carapi_sdk::{Error, Falta};
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exception for `e`, with the attributes the SDK's error carries.
pub(crate) fn to_py(py: Python<'_>, e: Error) -> PyErr {
    to_py_with_shortfall(py, e, None)
}

/// [`to_py`], with the price, balance and shortfall of a 402 when known.
pub(crate) fn to_py_with_shortfall(py: Python<'_>, e: Error, shortfall: Option<Falta>) -> PyErr {
    if let Error::Io(io) = e {
        return PyOSError::new_err(io.to_string());
    }
    match build(py, &e, shortfall) {
        Ok(err) => err,
        Err(failure) => PyRuntimeError::new_err(format!("{e} (carapi.erros: {failure})")),
    }
}

fn build(py: Python<'_>, e: &Error, shortfall: Option<Falta>) -> PyResult<PyErr> {
    let kw = PyDict::new(py);
    kw.set_item("status", e.status())?;
    kw.set_item("may_have_charged", e.may_have_charged())?;
    kw.set_item("is_retryable", e.is_retryable())?;
    kw.set_item("sandbox", e.is_sandbox())?;
    if let Some(f) = shortfall {
        kw.set_item("preco", f.preco)?;
        kw.set_item("saldo", f.saldo)?;
        kw.set_item("falta", f.falta)?;
    }
    let (class, message) = classify(e, &kw)?;
    let module = py.import("carapi.erros")?;
    let exc = module.getattr(class)?.call((message,), Some(&kw))?;
    Ok(PyErr::from_value(exc))
}

/// The exception class name and its message; fills `kw` with the variant's attributes.
fn classify(e: &Error, kw: &Bound<'_, PyDict>) -> PyResult<(&'static str, String)> {
    Ok(match e {
        Error::Api(api) => {
            kw.set_item("codigo", api.code.as_str())?;
            kw.set_item("operacao", api.operation)?;
            let class = match api.status {
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
            (class, api.message.clone())
        }
        Error::Validation(v) => {
            kw.set_item("codigo", validation_code(v))?;
            ("EntradaInvalida", v.to_string())
        }
        Error::Transport { operation, .. } => {
            kw.set_item("operacao", *operation)?;
            let (class, codigo) = if e.may_have_charged() {
                ("RespostaPerdida", "RESPOSTA_PERDIDA")
            } else {
                ("ErroDeRede", "ERRO_DE_REDE")
            };
            kw.set_item("codigo", codigo)?;
            (class, e.to_string())
        }
        Error::Decode { operation, .. } => {
            kw.set_item("operacao", *operation)?;
            kw.set_item("codigo", "RESPOSTA_INESPERADA")?;
            ("ApiError", e.to_string())
        }
        Error::SpendLimit {
            limite,
            gasto,
            reservado: reserved,
            preco,
        } => {
            kw.set_item("codigo", "LIMITE_DE_GASTO")?;
            kw.set_item("limite", *limite)?;
            kw.set_item("gasto", *gasto)?;
            kw.set_item("reservado", *reserved)?;
            kw.set_item("preco", *preco)?;
            ("LimiteDeGasto", e.to_string())
        }
        Error::Timeout {
            recarga_id,
            last_status,
            ..
        } => {
            kw.set_item("codigo", "TEMPO_ESGOTADO")?;
            kw.set_item("recarga_id", recarga_id.to_string())?;
            kw.set_item("ultimo_status", last_status.map(|s| s.as_str()))?;
            ("TempoEsgotado", e.to_string())
        }
        Error::Config(_) => {
            kw.set_item("codigo", "CONFIGURACAO_INVALIDA")?;
            ("ConfiguracaoInvalida", e.to_string())
        }
        Error::Cancelled { operation } => {
            kw.set_item("operacao", *operation)?;
            kw.set_item("codigo", "CANCELADO")?;
            ("Cancelado", e.to_string())
        }
        Error::Interrupted { operation } => {
            kw.set_item("operacao", *operation)?;
            kw.set_item("codigo", "RESPOSTA_PERDIDA")?;
            ("RespostaPerdida", e.to_string())
        }
        Error::Archive(a) => archive(a, kw)?,
        _ => ("ApiError", e.to_string()),
    })
}

/// An archive's refusal: `ErroDeAcervo` with `tipo`, `seq` and `expurgado_em`.
fn archive(
    a: &carapi_sdk::archive::ArchiveError,
    kw: &Bound<'_, PyDict>,
) -> PyResult<(&'static str, String)> {
    let (codigo, kind) = match a.kind() {
        ArchiveErrorKind::Tampered => ("ACERVO_ALTERADO", "alterado"),
        ArchiveErrorKind::Purged => ("TITULAR_EXPURGADO", "expurgado"),
        ArchiveErrorKind::Full => ("ACERVO", "cheio"),
        ArchiveErrorKind::Unavailable => ("ACERVO", "indisponivel"),
        ArchiveErrorKind::PoolTimeout => ("ACERVO", "sem_conexao"),
        _ => ("ACERVO", "outro"),
    };
    kw.set_item("codigo", codigo)?;
    kw.set_item("tipo", kind)?;
    kw.set_item("seq", a.seq())?;
    kw.set_item("expurgado_em", a.purged_at())?;
    Ok(("ErroDeAcervo", carapi_sdk::error_chain(a)))
}

/// The contract code the server gives the same mistake (docs/contrato.md, "Error codes").
fn validation_code(v: &ValidationError) -> &'static str {
    match v {
        ValidationError::CodigoCar(_) => "CODIGO_CAR_INVALIDO",
        ValidationError::CpfCnpj(_) => "CPF_CNPJ_INVALIDO",
        _ => "ENTRADA_INVALIDA",
    }
}
