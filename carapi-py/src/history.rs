//! `historico_todo`: [`carapi_sdk::Client::historico_stream`] as a Python iterator over every
//! item of every page (the next page is fetched when the current one is used up).

use std::pin::Pin;

use carapi_sdk::{ConsumoItem, HistoricoParams};
use futures::{Stream, StreamExt};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::{block_on, conv, errors, process};

type ItemStream = Pin<Box<dyn Stream<Item = carapi_sdk::Result<ConsumoItem>> + Send>>;

/// An iterator of history items (`ConsumoItem` dicts), newest first; raises the SDK's error
/// of the page that failed, then ends. It reads through the connections of the process that
/// made it, so in a child after a fork it raises `RuntimeError` instead of waiting forever.
#[pyclass(module = "carapi._carapi", name = "Paginas")]
pub struct Pages {
    stream: tokio::sync::Mutex<ItemStream>,
    pid: u32,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Pages {
    /// Every item of the history query `params`, from its page on.
    pub(crate) fn history(sdk: &carapi_sdk::Client, params: HistoricoParams) -> Self {
        Pages {
            stream: tokio::sync::Mutex::new(Box::pin(sdk.historico_stream(params))),
            pid: process::current_pid(),
        }
    }
}

#[pymethods]
impl Pages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !process::is_current(self.pid) {
            return Err(PyRuntimeError::new_err(
                "historico_todo() feito em outro processo (antes do fork): chame de novo neste",
            ));
        }
        let next = block_on(py, async { self.stream.lock().await.next().await });
        match next {
            None => Ok(None),
            Some(Ok(item)) => conv::to_py(py, &item).map(Some),
            Some(Err(e)) => Err(errors::to_py(py, e)),
        }
    }
}
