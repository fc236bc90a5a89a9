//! One purchase per key in this process: the lookups of a key through every handle of one
//! archive (every client on it) take its flight in turn; the buyer's purchase task holds it
//! until the bought answer is committed, so the next one reads it from the archive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedMutexGuard;

use crate::EndpointConsulta;

/// A lookup and its key.
type Key = (EndpointConsulta, String);

/// The flights of one archive, by lookup and key.
#[derive(Debug, Default)]
pub(crate) struct Flights {
    map: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
}

/// A key's flight, held: dropping it lets the next lookup of the key go.
#[derive(Debug)]
pub(crate) struct Flight {
    guard: Option<OwnedMutexGuard<()>>,
    flights: Arc<Flights>,
    key: Key,
}

impl Flights {
    /// Waits for `consulta` + `chave`'s flight (cancel-safe: a dropped wait leaves the queue).
    pub(crate) async fn take(self: &Arc<Self>, consulta: EndpointConsulta, chave: &str) -> Flight {
        let key = (consulta, chave.to_owned());
        let mutex = {
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(map.entry(key.clone()).or_default())
        };
        let guard = mutex.lock_owned().await;
        Flight {
            guard: Some(guard),
            flights: Arc::clone(self),
            key,
        }
    }
}

impl Drop for Flight {
    /// Releases the flight, and forgets the key when nobody else waits for it.
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self
            .flights
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map
            .get(&self.key)
            .is_some_and(|m| Arc::strong_count(m) == 1)
        {
            map.remove(&self.key);
        }
    }
}
