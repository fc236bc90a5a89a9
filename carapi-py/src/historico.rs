//! `historico_todo`: [`carapi_sdk::Client::historico_stream`] as a Python iterator over every
//! item of every page (the next page is fetched when the current one is used up).

use std::pin::Pin;

use carapi_sdk::{ConsumoItem, HistoricoParams};
use futures::{Stream, StreamExt};
use pyo3::prelude::*;

use crate::{bloquear, conv, erros};

type Fluxo = Pin<Box<dyn Stream<Item = carapi_sdk::Result<ConsumoItem>> + Send>>;

/// An iterator of history items (`ConsumoItem` dicts), newest first; raises the SDK's error
/// of the page that failed, then ends.
#[pyclass(module = "carapi._carapi", name = "Paginas")]
pub struct Paginas {
    fluxo: tokio::sync::Mutex<Fluxo>,
}

impl std::fmt::Debug for Paginas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Paginas").finish_non_exhaustive()
    }
}

impl Paginas {
    /// Every item of the history query `params`, from its page on.
    pub(crate) fn historico(sdk: &carapi_sdk::Client, params: HistoricoParams) -> Self {
        Paginas {
            fluxo: tokio::sync::Mutex::new(Box::pin(sdk.historico_stream(params))),
        }
    }
}

#[pymethods]
impl Paginas {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let proximo = bloquear(py, async { self.fluxo.lock().await.next().await });
        match proximo {
            None => Ok(None),
            Some(Ok(item)) => conv::para_py(py, &item).map(Some),
            Some(Err(e)) => Err(erros::para_py(py, e)),
        }
    }
}
