//! Fork safety: the tokio runtime and each client's connections belong to the process that made
//! them.
//!
//! A child made by `fork` (the default start method of `multiprocessing` and
//! `ProcessPoolExecutor` on Linux before Python 3.14) inherits a copy of the parent's memory but
//! only the thread that called `fork`: the runtime's worker threads, which drive its sockets
//! and timers, do not exist there, and the connections in a client's pool are the parent's
//! sockets. A call that used them would wait forever (no time-out fires without the timer
//! thread). So every value here is tagged with the process id that made it, compared with
//! [`std::process::id`] on each use: in another process a fresh value is made (a new runtime,
//! a new SDK client from the same settings), and the parent's copy is leaked, never dropped,
//! because dropping a runtime waits for threads that do not exist in the child.
//!
//! The swap is lock-free ([`arc_swap`]): a lock held by another thread at the moment of the
//! fork would stay held forever in the child.
//!
//! What a child's client counts: its own spend from the fork on ([`carapi_sdk::Client::gasto`]
//! of the new client starts at zero) and its own `max_spend` cap over that spend.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};
use std::thread::ThreadId;

use arc_swap::ArcSwapOption;

/// A value made in the process `pid`.
#[derive(Debug)]
pub(crate) struct Owned<T> {
    pid: u32,
    /// `Some` from construction to drop.
    value: Option<T>,
}

impl<T> Owned<T> {
    fn new(value: T) -> Self {
        Owned {
            pid: std::process::id(),
            value: Some(value),
        }
    }
}

impl<T> Deref for Owned<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value
            .as_ref()
            .unwrap_or_else(|| unreachable!("value taken only by drop"))
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // Made by the parent before a fork: its threads are not here, and dropping it could
            // wait for them forever (a runtime) or touch their state (a client's pool).
            std::mem::forget(self.value.take());
        }
    }
}

/// One value per process: the one made in this process, or a new one.
#[derive(Debug)]
pub(crate) struct PerProcess<T> {
    slot: ArcSwapOption<Owned<T>>,
}

impl<T> PerProcess<T> {
    /// Empty: the first [`PerProcess::get`] makes the value.
    pub(crate) const fn empty() -> Self {
        PerProcess {
            slot: ArcSwapOption::const_empty(),
        }
    }

    /// Holding `value`, made in this process.
    pub(crate) fn with(value: T) -> Self {
        PerProcess {
            slot: ArcSwapOption::from_pointee(Owned::new(value)),
        }
    }

    /// This process's value: the one held when it was made here, else a new one from `make`
    /// (which then replaces the other process's, leaked). Threads of one process that race
    /// here all get the same value.
    ///
    /// # Errors
    /// The error of `make`.
    pub(crate) fn get<E>(&self, make: impl Fn() -> Result<T, E>) -> Result<Arc<Owned<T>>, E> {
        let pid = std::process::id();
        loop {
            let current = self.slot.load_full();
            if let Some(v) = current.as_ref().filter(|v| v.pid == pid) {
                return Ok(Arc::clone(v));
            }
            let fresh = Arc::new(Owned::new(make()?));
            let previous = self
                .slot
                .compare_and_swap(&current, Some(Arc::clone(&fresh)));
            let won = match (previous.as_ref(), current.as_ref()) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            };
            if won {
                return Ok(fresh);
            }
            // Another thread of this process stored one first: loop and use it.
        }
    }

    /// This process's value if there is one, without making it.
    pub(crate) fn current(&self) -> Option<Arc<Owned<T>>> {
        self.slot
            .load_full()
            .filter(|v| v.pid == std::process::id())
    }

    /// Forgets the value (dropped once its last user is done, if made in this process).
    pub(crate) fn clear(&self) {
        self.slot.store(None);
    }
}

/// The tokio runtime of this process: every call of the package runs on it (clients and test
/// servers alike), started on first use with one worker per core.
static RUNTIME: PerProcess<tokio::runtime::Runtime> =
    PerProcess::<tokio::runtime::Runtime>::empty();

/// This process's runtime (see the module docs).
pub(crate) fn runtime() -> Arc<Owned<tokio::runtime::Runtime>> {
    RUNTIME
        .get(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("carapi")
                .build()
        })
        .unwrap_or_else(|e| panic!("runtime tokio do carapi: {e}"))
}

/// True in the process that made `owner_pid` (see [`current_pid`]).
pub(crate) fn is_current(owner_pid: u32) -> bool {
    owner_pid == std::process::id()
}

/// The id of this process, for values that cannot be remade in a child (a test server, an
/// iterator's position) and refuse to run there instead.
pub(crate) fn current_pid() -> u32 {
    std::process::id()
}

/// The thread that runs the interpreter's end (`atexit`), once it started.
static ENDING: OnceLock<ThreadId> = OnceLock::new();

/// Records that the interpreter is ending, on the thread that ends it (the package's `atexit`
/// handler, which then closes every client: their purchases end and are archived).
pub(crate) fn ending() {
    let _ = ENDING.set(std::thread::current().id());
}

/// Called by a thread coming back from a call with the GIL released: once the interpreter is
/// ending, any thread but the one ending it (a daemon thread whose lookup ended while the
/// clients closed) parks for good instead of taking the GIL again. A daemon thread that wakes
/// during the interpreter's finalization is made to exit from inside the extension's frames,
/// which can crash the process; parked, it simply ends with it.
pub(crate) fn park_if_ending() {
    if ENDING
        .get()
        .is_some_and(|t| *t != std::thread::current().id())
    {
        loop {
            std::thread::park();
        }
    }
}
