//! `carapi._carapi`: the native part of the Python package `carapi` (carapi-py/python/carapi).
//!
//! A synchronous face over [`carapi_sdk::Client`] and [`carapi_test_double::ServidorTeste`]:
//! every call runs on one tokio runtime owned by the extension, with the GIL released while it
//! waits, so other Python threads keep running. No HTTP, retry, spend or validation logic lives
//! here: results are the SDK's models turned into Python values (module `conv`), errors are the SDK's
//! errors turned into the package's exceptions (module `erros`).

mod client;
mod conv;
mod dominio;
mod erros;
mod historico;
mod teste;

use std::future::Future;
use std::sync::OnceLock;

use pyo3::prelude::*;

/// The runtime every call of the package runs on (clients and test servers alike), started on
/// first use with one worker per core.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("carapi")
            .build()
            .unwrap_or_else(|e| panic!("runtime tokio do carapi: {e}"))
    })
}

/// Runs `fut` to completion on [`runtime`] with the GIL released.
fn bloquear<F: Future + Send>(py: Python<'_>, fut: F) -> F::Output
where
    F::Output: Send,
{
    py.detach(|| runtime().block_on(fut))
}

/// Runs an SDK call with the GIL released; its error becomes the package's exception.
fn chamar<T: Send>(
    py: Python<'_>,
    fut: impl Future<Output = carapi_sdk::Result<T>> + Send,
) -> PyResult<T> {
    bloquear(py, fut).map_err(|e| erros::para_py(py, e))
}

/// The extension module `carapi._carapi` (re-exported by `carapi/__init__.py`).
#[pymodule]
fn _carapi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<historico::Paginas>()?;
    m.add_class::<teste::ServidorTeste>()?;
    m.add_function(wrap_pyfunction!(dominio::parse_decimal, m)?)?;
    m.add_function(wrap_pyfunction!(dominio::parse_data, m)?)?;
    m.add_function(wrap_pyfunction!(dominio::parse_dms, m)?)?;
    m.add_function(wrap_pyfunction!(dominio::validar_codigo_car, m)?)?;
    m.add_function(wrap_pyfunction!(dominio::validar_documento, m)?)?;
    m.add("SANDBOX", dominio::valores_sandbox(m.py())?)?;
    m.add("SDK_VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
