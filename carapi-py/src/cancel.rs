//! `carapi._carapi.CancelToken`: the SDK's cancellation token, for the calls an `AsyncClient` runs
//! in worker threads (a thread blocked in a call cannot be stopped by cancelling its asyncio
//! task; the token makes the call give up while it has not been sent).

use carapi_sdk::CancellationToken;
use pyo3::prelude::*;

/// A cancellation token (`carapi_sdk::CancellationToken`): `Client._com_cancelamento(token)`
/// makes a handle whose calls not yet sent give up once it is cancelled.
#[pyclass(module = "carapi._carapi", name = "CancelToken", frozen)]
#[derive(Debug, Default)]
pub(crate) struct CancelToken(CancellationToken);

impl CancelToken {
    /// The SDK's token (a clone: cancelling either cancels both).
    pub(crate) fn token(&self) -> CancellationToken {
        self.0.clone()
    }
}

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Cancels: the handles' calls not yet sent give up (nothing sent, nothing charged).
    fn cancel(&self) {
        self.0.cancel();
    }

    /// True once cancelled.
    #[getter]
    fn cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}
