//! [`ThisProcess`]: a value that belongs to the process that made it. A child made by `fork()`
//! (Python's `multiprocessing`, a pre-forking server) has a copy of the parent's memory but none
//! of its threads, and must not use nor close the parent's SQLite connections, threads or
//! sockets: its copy is left alone (leaked) when dropped, and the archive opens its own.

use std::ops::Deref;

/// A value of the process that made it (see the module docs).
#[derive(Debug)]
pub(crate) struct ThisProcess<T> {
    value: Option<T>,
    pid: u32,
}

impl<T> ThisProcess<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            value: Some(value),
            pid: std::process::id(),
        }
    }

    /// True in the process that made it (false in a child after `fork()`).
    pub(crate) fn is_here(&self) -> bool {
        self.pid == std::process::id()
    }
}

impl<T> Deref for ThisProcess<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.value.as_ref().expect("set until dropped")
    }
}

impl<T> Drop for ThisProcess<T> {
    fn drop(&mut self) {
        if !self.is_here() {
            std::mem::forget(self.value.take());
        }
    }
}
