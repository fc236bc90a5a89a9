//! Which tokio runtime a call runs on: the SDK needs one with its time and I/O drivers
//! (`Builder::enable_all()`, which `#[tokio::main]` and `#[tokio::test]` do). Without them tokio
//! would panic deep inside a timer or a socket; the SDK answers [`Error::Config`] instead.
//!
//! The drivers are probed once per runtime and thread: tokio has no query for them, so the
//! probe creates a timer and a socket under `catch_unwind`, with tokio's panic message kept off
//! the panic hook (a hook installed once that passes every other panic on to the one before it).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::time::Duration;

use tokio::runtime::{Handle, Id};

use crate::Error;

thread_local! {
    /// The runtime last found complete on this thread.
    static COMPLETE_RUNTIME: Cell<Option<Id>> = const { Cell::new(None) };
    /// True while this thread probes (its panic is expected and not shown).
    static PROBING: Cell<bool> = const { Cell::new(false) };
}

/// `Ok` inside a tokio runtime with its time and I/O drivers.
///
/// # Errors
/// [`Error::Config`] outside a runtime, or in one built without `enable_time` / `enable_io`.
pub(crate) fn check() -> Result<(), Error> {
    let handle = Handle::try_current().map_err(|_| {
        Error::Config(
            "chamada fora de um runtime tokio: use #[tokio::main], um Runtime com enable_all(), ou o cliente blocking (feature `blocking`)".into(),
        )
    })?;
    let id = handle.id();
    if COMPLETE_RUNTIME.get() == Some(id) {
        return Ok(());
    }
    if !probe(|| drop(tokio::time::sleep(Duration::ZERO))) {
        return Err(Error::Config(
            "o runtime tokio não tem temporizador: construa-o com Builder::enable_all() (ou enable_time() e enable_io())".into(),
        ));
    }
    if !probe(tokio_socket) {
        return Err(Error::Config(
            "o runtime tokio não tem E/S: construa-o com Builder::enable_all() (ou enable_io() e enable_time())".into(),
        ));
    }
    COMPLETE_RUNTIME.set(Some(id));
    Ok(())
}

/// A loopback UDP socket registered with the runtime's I/O driver (a machine without loopback
/// is not asked).
fn tokio_socket() {
    if let Ok(s) = std::net::UdpSocket::bind(("127.0.0.1", 0))
        && s.set_nonblocking(true).is_ok()
    {
        drop(tokio::net::UdpSocket::from_std(s));
    }
}

/// True when `f` returns; false when it panics (its message kept off the panic hook).
fn probe(f: impl FnOnce()) -> bool {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PROBING.get() {
                previous(info);
            }
        }));
    });
    PROBING.set(true);
    let ok = catch_unwind(AssertUnwindSafe(f)).is_ok();
    PROBING.set(false);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_without_drivers_is_a_config_error_not_a_panic() {
        assert!(matches!(check(), Err(Error::Config(m)) if m.contains("fora de um runtime")));
        let bare = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let e = bare.block_on(async { check() }).unwrap_err();
        assert!(
            matches!(&e, Error::Config(m) if m.contains("enable_all")),
            "{e}"
        );
        let without_io = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let e = without_io.block_on(async { check() }).unwrap_err();
        assert!(matches!(&e, Error::Config(m) if m.contains("E/S")), "{e}");
        let completo = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        completo.block_on(async {
            check().unwrap();
            check().unwrap();
        });
    }
}
