//! The test clock: the system clock plus an offset that only moves forward
//! ([`TestClock::advance`]) or is set to an instant ([`TestClock::fixar`]).
//!
//! It still runs with real time between moves, so two requests never share an instant and the
//! history keeps its order; what the tests control is how far it is from the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};

use carapi_service::clock::Clock;

/// Largest offset from the system clock either way: 100 years, in milliseconds. Moves beyond it
/// saturate, so no instant the server computes (day and month bounds, timestamps) can leave
/// the ranges of chrono, SQLite's text dates and PostgreSQL's `timestamptz`.
pub(crate) const MAX_OFFSET_MS: i64 = 100 * 366 * 24 * 3600 * 1000;

/// A movable clock shared by the server of a test and the test itself (clones share it).
#[derive(Debug, Clone, Default)]
pub struct TestClock {
    /// Offset from the system clock, in milliseconds.
    offset_ms: Arc<AtomicI64>,
}

impl TestClock {
    /// A clock equal to the system clock until moved.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The current instant: the system clock plus the offset.
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::milliseconds(self.offset_ms.load(Ordering::SeqCst))
    }

    /// Moves the clock `d` forward and returns the new instant; the offset saturates at
    /// 100 years (`MAX_OFFSET_MS`).
    pub(crate) fn advance(&self, d: Duration) -> DateTime<Utc> {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        self.offset_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |atual| {
                Some(atual.saturating_add(ms).min(MAX_OFFSET_MS))
            })
            .ok();
        self.now()
    }

    /// Sets the clock to `instant` (earlier instants too: a test may start "yesterday"),
    /// within 100 years (`MAX_OFFSET_MS`) of the system clock either way.
    pub fn set(&self, instant: DateTime<Utc>) {
        let delta = instant.signed_duration_since(Utc::now()).num_milliseconds();
        self.offset_ms
            .store(delta.clamp(-MAX_OFFSET_MS, MAX_OFFSET_MS), Ordering::SeqCst);
    }

    /// The [`Clock`] the server reads: this clock.
    pub(crate) fn clock(&self) -> Clock {
        let eu = self.clone();
        Clock::from_fn(move || eu.now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_every_clone_forward() {
        let r = TestClock::new();
        let other = r.clock();
        let antes = other.now();
        r.advance(Duration::from_secs(11 * 60));
        let depois = other.now();
        assert!(depois - antes >= chrono::Duration::minutes(11));
        assert!(depois - antes < chrono::Duration::minutes(12));
    }

    #[test]
    fn fixing_sets_the_instant_even_in_the_past() {
        let r = TestClock::new();
        let yesterday = Utc::now() - chrono::Duration::days(1);
        r.set(yesterday);
        assert!((r.now() - yesterday).num_seconds().abs() < 2);
    }

    #[test]
    fn absurd_advances_saturate_instead_of_wrapping() {
        let r = TestClock::new();
        r.advance(Duration::from_secs(1));
        r.advance(Duration::from_secs(u64::MAX));
        assert_eq!(r.offset_ms.load(Ordering::SeqCst), MAX_OFFSET_MS);
        r.set(DateTime::<Utc>::MIN_UTC);
        assert_eq!(r.offset_ms.load(Ordering::SeqCst), -MAX_OFFSET_MS);
        let _ = r.now();
    }
}
