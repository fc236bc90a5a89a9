//! The client for synchronous code (cargo feature `blocking`), as `reqwest::blocking` is for
//! reqwest: [`Client`] has every operation of [`crate::Client`], with the same spend guard,
//! retries, rate limit and errors, and blocks the calling thread until the answer.
//!
//! ```no_run
//! fn main() -> Result<(), carapi_sdk::Error> {
//!     let client = carapi_sdk::blocking::Client::from_env()?;
//!     let car = client.car(carapi_sdk::sandbox::CAR_BASICO)?;
//!     println!("{} ({:?} ha)", car.dados.codigo_car, car.dados.area_total());
//!     Ok(())
//! }
//! ```
//!
//! # The runtime inside
//!
//! Each client owns a tokio runtime with one worker thread (it keeps the pooled connections
//! alive between calls); a call runs on the calling thread (`block_on`), so many threads may
//! share one client (`Clone`, `Send + Sync`). Calling it from inside a tokio runtime is refused
//! with [`Error::Config`] (blocking there would stall the runtime): use [`crate::Client`].
//!
//! # `fork()`
//!
//! A child process made by `fork()` (Python's `multiprocessing` and `ProcessPoolExecutor` on
//! Linux, a pre-forking server) has none of the parent's threads, so the parent's runtime
//! cannot run there. The client notices on its first call in the child (the process id
//! changed), leaves the parent's runtime and connections alone (never dropped in the child:
//! that would wait on threads that are not there) and builds its own: a fresh runtime, a fresh
//! connection pool, and fresh spend figures. **A child counts its own spending from the fork
//! on**: its [`Client::gasto`] starts at zero and [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend)
//! caps the child's spending alone (the parent's figures and cap go on in the parent). A client
//! built with [`ClientBuilder::http_client`](crate::ClientBuilder::http_client) cannot be
//! rebuilt after a fork (that HTTP client's connections are the parent's): there its calls
//! return [`Error::Config`]; build the client in the child instead.

mod operations;
mod pages;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

pub use operations::ReciboDownload;
pub use pages::Pages;

use crate::client::CallOptions;
use crate::{ClientBuilder, Error, Gasto, Result};

/// Blocking client of the carapi `/v1` API: [`crate::Client`]'s operations for synchronous
/// code. See the [module docs](self) for the runtime inside and `fork()`.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Shared>,
    /// This handle's settings of its calls ([`Client::with_timeout`] and the other `with_*`).
    call: CallOptions,
}

struct Shared {
    builder: ClientBuilder,
    base: Url,
    process_runtime: Mutex<Arc<ProcessRuntime>>,
}

/// The runtime and async client of one process.
struct ProcessRuntime {
    pid: u32,
    runtime: Option<tokio::runtime::Runtime>,
    client: Option<crate::Client>,
}

impl ProcessRuntime {
    fn new(builder: &ClientBuilder) -> Result<Self> {
        let client = builder.clone().build()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("carapi-sdk-blocking")
            .enable_all()
            .build()
            .map_err(|e| Error::Config(format!("runtime do cliente blocking: {e}")))?;
        Ok(Self {
            pid: pid(),
            runtime: Some(runtime),
            client: Some(client),
        })
    }

    fn client(&self) -> &crate::Client {
        self.client.as_ref().expect("set until dropped")
    }
}

impl Drop for ProcessRuntime {
    /// Waits for the purchases still running ([`crate::Client::close`]: at most the request
    /// time-out), so that a program returning from `main` right after a lookup keeps what it
    /// paid for; then stops the runtime. Dropped inside an async context, the wait runs on a
    /// thread of its own (a runtime cannot be blocked on from inside another).
    fn drop(&mut self) {
        if self.pid == pid() {
            if let (Some(rt), Some(client)) = (self.runtime.as_ref(), self.client.as_ref()) {
                let close = || {
                    let _ = rt.block_on(client.close());
                };
                if tokio::runtime::Handle::try_current().is_ok() {
                    std::thread::scope(|s| {
                        s.spawn(close);
                    });
                } else {
                    close();
                }
            }
            if let Some(rt) = self.runtime.take() {
                rt.shutdown_background();
            }
        } else {
            // The parent's, dropped in a child after fork(): its threads are not here.
            std::mem::forget(self.runtime.take());
            std::mem::forget(self.client.take());
        }
    }
}

impl Client {
    /// A builder with the defaults; finish it with [`ClientBuilder::build_blocking`].
    #[must_use]
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client configured from the environment (`CARAPI_BASE_URL`, `CARAPI_API_KEY`), as
    /// [`crate::Client::from_env`].
    ///
    /// # Errors
    /// [`Error::Config`] when a variable is missing or the URL is invalid, or the runtime cannot
    /// be started.
    pub fn from_env() -> Result<Client> {
        ClientBuilder::default().build_blocking()
    }

    pub(crate) fn new(builder: ClientBuilder) -> Result<Client> {
        let process_runtime = ProcessRuntime::new(&builder)?;
        let base = process_runtime.client().base_url().clone();
        Ok(Client {
            inner: Arc::new(Shared {
                builder,
                base,
                process_runtime: Mutex::new(Arc::new(process_runtime)),
            }),
            call: CallOptions::default(),
        })
    }

    /// The base address requests go to (without `/v1`).
    #[must_use]
    pub fn base_url(&self) -> &Url {
        &self.inner.base
    }

    /// A handle on the same client whose calls use `timeout` per attempt, as
    /// [`crate::Client::with_timeout`].
    #[must_use]
    pub fn with_timeout(&self, timeout: Duration) -> Client {
        let mut c = self.clone();
        c.call.timeout = Some(timeout);
        c
    }

    /// A handle whose calls give up when `token` is cancelled before they were sent, as
    /// [`crate::Client::with_cancel`].
    #[must_use]
    pub fn with_cancel(&self, token: crate::CancellationToken) -> Client {
        let mut c = self.clone();
        c.call.cancel = Some(token);
        c
    }

    /// Waits until every purchase of this client in this process has ended (at most the
    /// request time-out; the purchases still running then), as [`crate::Client::close`]. The
    /// client's drop does it too.
    ///
    /// # Errors
    /// [`Error::Config`] inside a tokio runtime.
    pub fn close(&self) -> Result<usize> {
        self.run(|c| async move { Ok(c.close().await) })
    }

    /// What this client (and its clones) spent in this process, as [`crate::Client::gasto`]; in a
    /// child after `fork()`, from the fork on.
    #[must_use]
    pub fn gasto(&self) -> Gasto {
        self.process_runtime()
            .map(|e| e.client().gasto())
            .unwrap_or_default()
    }

    /// The spend cap, BRL ([`crate::Client::max_spend`]).
    #[must_use]
    pub fn max_spend(&self) -> Option<rust_decimal::Decimal> {
        self.process_runtime()
            .ok()
            .and_then(|e| e.client().max_spend())
    }

    /// This process's runtime and async client: the ones built here, or new ones in a child
    /// after `fork()`.
    fn process_runtime(&self) -> Result<Arc<ProcessRuntime>> {
        let mut process_runtime = self
            .inner
            .process_runtime
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if process_runtime.pid != pid() {
            if self.inner.builder.has_http_client() {
                return Err(Error::Config(
                    "cliente blocking com http_client próprio usado após fork(): construa o cliente no processo filho".into(),
                ));
            }
            *process_runtime = Arc::new(ProcessRuntime::new(&self.inner.builder)?);
        }
        Ok(process_runtime.clone())
    }

    /// Runs `call` on this process's runtime, blocking the calling thread.
    fn run<T, F>(&self, call: impl FnOnce(crate::Client) -> F) -> Result<T>
    where
        F: Future<Output = Result<T>>,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(Error::Config(
                "carapi_sdk::blocking::Client chamado dentro de um runtime tokio: use carapi_sdk::Client (assíncrono)".into(),
            ));
        }
        let process_runtime = self.process_runtime()?;
        let client = process_runtime.client().with_call(self.call.clone());
        let rt = process_runtime.runtime.as_ref().expect("set until dropped");
        rt.block_on(call(client))
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Client")
            .field("base_url", &self.inner.base.as_str())
            .field("timeout", &self.call.timeout)
            .field("builder", &self.inner.builder)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Builds a [`blocking::Client`](Client) (cargo feature `blocking`) with these settings.
    ///
    /// # Errors
    /// Those of [`ClientBuilder::build`]; [`Error::Config`] when the runtime cannot be started.
    pub fn build_blocking(self) -> Result<Client> {
        Client::new(self)
    }
}

/// This process's id (a test may pretend to be a child after fork).
fn pid() -> u32 {
    #[cfg(test)]
    {
        let fake = tests::FAKE_PID.load(std::sync::atomic::Ordering::SeqCst);
        if fake != 0 {
            return fake;
        }
    }
    std::process::id()
}

#[cfg(test)]
mod tests;
