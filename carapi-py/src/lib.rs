//! `carapi._carapi`: the native part of the Python package `carapi` (carapi-py/python/carapi).
//!
//! A synchronous face over [`carapi_sdk::Client`] and [`carapi_test_double::TestServer`]:
//! every call runs on the process's tokio runtime (module `process`, remade in a child after a
//! fork), with the GIL released while it waits, so other Python threads keep running. No HTTP,
//! retry, spend or validation logic lives here: results are the SDK's models turned into Python
//! values (module `conv`), errors are the SDK's errors turned into the package's exceptions
//! (module `errors`).

mod batch;
mod cancel;
mod client;
mod conv;
mod domain;
mod errors;
mod history;
mod process;
mod testing;

use std::future::Future;

use pyo3::prelude::*;

/// Runs `fut` to completion on this process's runtime with the GIL released. Once the
/// interpreter is ending (`fechar_todos` at exit), a thread other than the one ending it never
/// comes back to Python (see [`process::park_if_ending`]).
fn block_on<F: Future + Send>(py: Python<'_>, fut: F) -> F::Output
where
    F::Output: Send,
{
    let rt = process::runtime();
    py.detach(|| {
        let out = rt.block_on(fut);
        process::park_if_ending();
        out
    })
}

/// Closes every `Client` of this process still open, each after its purchases ended (the
/// package registers it with `atexit`: the interpreter is ending); returns how many purchases
/// were still running.
#[pyfunction(name = "fechar_todos")]
fn close_all(py: Python<'_>) -> usize {
    process::ending();
    client::close_all(py)
}

/// The extension module `carapi._carapi` (re-exported by `carapi/__init__.py`).
#[pymodule]
fn _carapi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<client::Client>()?;
    m.add_class::<cancel::CancelToken>()?;
    m.add_class::<client::ArchiveTools>()?;
    m.add_class::<history::Pages>()?;
    m.add_class::<testing::TestServer>()?;
    m.add_function(wrap_pyfunction!(domain::parse_decimal, m)?)?;
    m.add_function(wrap_pyfunction!(domain::parse_data, m)?)?;
    m.add_function(wrap_pyfunction!(domain::parse_dms, m)?)?;
    m.add_function(wrap_pyfunction!(domain::check_codigo_car, m)?)?;
    m.add_function(wrap_pyfunction!(domain::check_documento, m)?)?;
    m.add("SANDBOX", domain::sandbox_values(m.py())?)?;
    m.add("IMOVEIS_TESTE", testing::bundled_records(m.py())?)?;
    m.add("DOCUMENTO_TESTE", testing::example_document())?;
    m.add("SDK_VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(close_all, m)?)?;
    m.add_function(wrap_pyfunction!(batch::state_of, m)?)?;
    m.add_function(wrap_pyfunction!(batch::municipality_of, m)?)?;
    m.add_function(wrap_pyfunction!(batch::from_json, m)?)?;
    m.add_function(wrap_pyfunction!(batch::with_cancel, m)?)?;
    m.add_function(wrap_pyfunction!(batch::in_archive, m)?)?;
    m.add("CONSULTAS", batch::consultas(m.py())?)?;
    m.add("TITULOS", batch::titles(m.py())?)?;
    Ok(())
}
