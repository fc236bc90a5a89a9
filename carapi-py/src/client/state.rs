//! What a `Client` holds: its settings, this process's SDK client (remade in a child after a
//! fork, module `process`) and whether it was closed; and every client of the process, so that
//! the end of the interpreter closes them (their purchases end and are archived first).

use std::future::Future;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::sync::Weak;

use arc_swap::ArcSwapOption;
use carapi_sdk::archive::ArchivePolicy;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::process::{Owned, PerProcess};
use crate::{block_on, errors};

/// The clients of this process that may still have purchases running, for [`close_all`]. A
/// lock-free list (a lock held by another thread at a fork would stay held in the child).
static OPEN: ArcSwapOption<Vec<Weak<State>>> = ArcSwapOption::const_empty();

/// Remembers `state` for [`close_all`] (and forgets the clients already dropped).
pub(crate) fn register(state: &Arc<State>) {
    let new = Arc::downgrade(state);
    OPEN.rcu(|current| {
        let mut list: Vec<Weak<State>> = current.as_deref().cloned().unwrap_or_default();
        list.retain(|w| w.strong_count() > 0);
        list.push(new.clone());
        Some(Arc::new(list))
    });
}

/// Closes every client of this process still open, each after its purchases ended (see
/// [`State::close`]); the package registers it with `atexit`, so a program that ends without
/// `close()` keeps what it paid for. Returns how many purchases were still running.
pub(crate) fn close_all(py: Python<'_>) -> usize {
    let list = OPEN.load_full();
    list.iter()
        .flat_map(|l| l.iter())
        .filter_map(Weak::upgrade)
        .map(|s| s.close(py))
        .sum()
}

/// Options of `Client(...)` beyond the URL and the key.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) max_spend: Option<rust_decimal::Decimal>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) rate_limit: Option<u32>,
    pub(crate) poll_interval: Option<Duration>,
    /// `acervo=`: the archive and its policy (`archive::from_args`).
    pub(crate) archive: Option<super::archive::Setup>,
}

/// The SDK client of this process, the settings to make another, and the closed flag.
#[derive(Debug)]
pub(crate) struct State {
    builder: carapi_sdk::ClientBuilder,
    sdk: PerProcess<carapi_sdk::Client>,
    closed: AtomicBool,
    /// `gasto()` at the close (the SDK client is gone after it).
    final_gasto: ArcSwapOption<carapi_sdk::Gasto>,
    base_url: String,
    max_spend: Option<rust_decimal::Decimal>,
    /// The archive's file and policy: a child after a fork opens the file again (an SQLite
    /// connection must not cross a fork).
    archive: Option<(Option<super::archive::Location>, ArchivePolicy)>,
}

/// The SDK client a call uses (this process's; kept alive by the call).
pub(crate) type Sdk = Arc<Owned<carapi_sdk::Client>>;

impl State {
    /// Builds the SDK client now, so a bad setting fails here and not at the first call.
    pub(crate) fn build(
        py: Python<'_>,
        mut b: carapi_sdk::ClientBuilder,
        o: Options,
    ) -> PyResult<Self> {
        if let Some(m) = o.max_spend {
            b = b.max_spend(m);
        }
        if let Some(t) = o.timeout {
            b = b.timeout(t);
        }
        if let Some(p) = o.poll_interval {
            b = b.poll_interval(p);
        }
        b = b.rate_limit(o.rate_limit.and_then(NonZeroU32::new));
        let mut archive = None;
        if let Some(setup) = o.archive {
            archive = Some((setup.location, setup.policy.clone()));
            b = b.archive(setup.archive, setup.policy);
        }
        let sdk = b.clone().build().map_err(|e| errors::to_py(py, e))?;
        Ok(State {
            builder: b,
            base_url: sdk.base_url().as_str().trim_end_matches('/').to_owned(),
            max_spend: sdk.max_spend(),
            sdk: PerProcess::with(sdk),
            closed: AtomicBool::new(false),
            final_gasto: ArcSwapOption::const_empty(),
            archive,
        })
    }

    /// This process's SDK client: the one built here, or (first call in a child after a fork)
    /// a new one from the same settings.
    ///
    /// # Errors
    /// `RuntimeError` once closed; the builder's error (as the package's exception).
    pub(crate) fn sdk(&self, py: Python<'_>) -> PyResult<Sdk> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PyRuntimeError::new_err(
                "carapi.Client fechado (close() ou fim do bloco with): crie outro",
            ));
        }
        self.sdk
            .get(|| self.rebuild())
            .map_err(|e| errors::to_py(py, e))
    }

    /// The SDK client of a child after a fork: the same settings, the archive's file opened
    /// again.
    fn rebuild(&self) -> carapi_sdk::Result<carapi_sdk::Client> {
        let mut b = self.builder.clone();
        if let Some((location, policy)) = &self.archive {
            b = b.archive(
                super::archive::Setup::reopen(location.as_ref())?,
                policy.clone(),
            );
        }
        b.build()
    }

    /// The archive policy (`acervo=`), if any.
    pub(crate) fn policy(&self) -> Option<&ArchivePolicy> {
        self.archive.as_ref().map(|(_, p)| p)
    }

    /// The base address, without `/v1` and without a trailing slash.
    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The spend cap, BRL.
    pub(crate) fn max_spend(&self) -> Option<rust_decimal::Decimal> {
        self.max_spend
    }

    /// What this process's client spent (zero in a child that has not called yet; the
    /// figure at the close once closed).
    pub(crate) fn gasto(&self) -> carapi_sdk::Gasto {
        if let Some(g) = self.final_gasto.load_full() {
            return *g;
        }
        self.sdk.current().map(|s| s.gasto()).unwrap_or_default()
    }

    /// Closes: later calls raise; waits (GIL released) until every purchase this process's
    /// client sent has ended, counted and, with an archive, committed (`carapi_sdk::Client::close`,
    /// at most the longer of the client's time-outs); then keeps `gasto()` and lets the
    /// connections go. Returns how many purchases were still running after that wait (0 when
    /// all ended, and when already closed).
    pub(crate) fn close(&self, py: Python<'_>) -> usize {
        if self.closed.swap(true, Ordering::AcqRel) {
            return 0;
        }
        let running = match self.sdk.current() {
            Some(sdk) => {
                let sdk = carapi_sdk::Client::clone(&sdk);
                block_on(py, async move { sdk.close().await })
            }
            None => 0,
        };
        let g = self.gasto();
        self.final_gasto.store(Some(Arc::new(g)));
        self.sdk.clear();
        running
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

/// Runs one SDK call on `client` (this process's, or a handle of it) with the GIL released.
pub(crate) fn call<T, F, Fut>(py: Python<'_>, client: carapi_sdk::Client, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(carapi_sdk::Client) -> Fut,
    Fut: Future<Output = carapi_sdk::Result<T>> + Send,
{
    block_on(py, f(client)).map_err(|e| errors::to_py(py, e))
}

/// Runs one charged lookup on `client`; a 402 `SALDO_INSUFICIENTE` gets its price, the balance
/// and the shortfall from one free `GET /v1/saldo` (`carapi_sdk::Client::falta`).
pub(crate) fn consulta<T, F, Fut>(py: Python<'_>, client: carapi_sdk::Client, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(carapi_sdk::Client) -> Fut,
    Fut: Future<Output = carapi_sdk::Result<T>> + Send,
{
    let fut = f(client.clone());
    let r = block_on(py, async {
        match fut.await {
            Ok(v) => Ok(v),
            Err(e) => {
                let shortfall = client.falta(&e).await.ok().flatten();
                Err((e, shortfall))
            }
        }
    });
    r.map_err(|(e, shortfall)| errors::to_py_with_shortfall(py, e, shortfall))
}
