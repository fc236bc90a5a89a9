//! The test clock: the system clock plus an offset that only moves forward
//! ([`RelogioTeste::avancar`]) or is set to an instant ([`RelogioTeste::fixar`]).
//!
//! It still runs with real time between moves, so two requests never share an instant and the
//! history keeps its order; what the tests control is how far it is from the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};

use carapi_service::state::Relogio;

/// Largest offset from the system clock either way: 100 years, in milliseconds. Moves beyond it
/// saturate, so no instant the server computes (day and month bounds, timestamps) can leave
/// the ranges of chrono, SQLite's text dates and PostgreSQL's `timestamptz`.
pub const DESLOCAMENTO_MAXIMO_MS: i64 = 100 * 366 * 24 * 3600 * 1000;

/// A movable clock shared by the server of a test and the test itself (clones share it).
#[derive(Debug, Clone, Default)]
pub struct RelogioTeste {
    /// Offset from the system clock, in milliseconds.
    deslocamento_ms: Arc<AtomicI64>,
}

impl RelogioTeste {
    /// A clock equal to the system clock until moved.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current instant: the system clock plus the offset.
    pub fn agora(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::milliseconds(self.deslocamento_ms.load(Ordering::SeqCst))
    }

    /// Moves the clock `d` forward and returns the new instant; the offset saturates at
    /// 100 years (`DESLOCAMENTO_MAXIMO_MS`).
    pub fn avancar(&self, d: Duration) -> DateTime<Utc> {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        self.deslocamento_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |atual| {
                Some(atual.saturating_add(ms).min(DESLOCAMENTO_MAXIMO_MS))
            })
            .ok();
        self.agora()
    }

    /// Sets the clock to `instante` (earlier instants too: a test may start "yesterday"),
    /// within 100 years (`DESLOCAMENTO_MAXIMO_MS`) of the system clock either way.
    pub fn fixar(&self, instante: DateTime<Utc>) {
        let delta = instante
            .signed_duration_since(Utc::now())
            .num_milliseconds();
        self.deslocamento_ms.store(
            delta.clamp(-DESLOCAMENTO_MAXIMO_MS, DESLOCAMENTO_MAXIMO_MS),
            Ordering::SeqCst,
        );
    }

    /// The [`Relogio`] the server reads: this clock.
    pub fn relogio(&self) -> Relogio {
        let eu = self.clone();
        Relogio::de(move || eu.agora())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_every_clone_forward() {
        let r = RelogioTeste::new();
        let outro = r.relogio();
        let antes = outro.agora();
        r.avancar(Duration::from_secs(11 * 60));
        let depois = outro.agora();
        assert!(depois - antes >= chrono::Duration::minutes(11));
        assert!(depois - antes < chrono::Duration::minutes(12));
    }

    #[test]
    fn fixing_sets_the_instant_even_in_the_past() {
        let r = RelogioTeste::new();
        let ontem = Utc::now() - chrono::Duration::days(1);
        r.fixar(ontem);
        assert!((r.agora() - ontem).num_seconds().abs() < 2);
    }

    #[test]
    fn absurd_advances_saturate_instead_of_wrapping() {
        let r = RelogioTeste::new();
        r.avancar(Duration::from_secs(1));
        r.avancar(Duration::from_secs(u64::MAX));
        assert_eq!(
            r.deslocamento_ms.load(Ordering::SeqCst),
            DESLOCAMENTO_MAXIMO_MS
        );
        r.fixar(DateTime::<Utc>::MIN_UTC);
        assert_eq!(
            r.deslocamento_ms.load(Ordering::SeqCst),
            -DESLOCAMENTO_MAXIMO_MS
        );
        let _ = r.agora();
    }
}
