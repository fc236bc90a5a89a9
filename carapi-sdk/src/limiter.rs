//! The client-side rate limiter, so that a batch never meets a 429 it caused itself.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// The contract's rate limit: 10 requests per second per key (contract, "Limits").
pub const DEFAULT_RATE_LIMIT: NonZeroU32 = NonZeroU32::new(10).expect("10 is not zero");

/// Spaces requests at least `1/n` s apart (a burst of 1), so no one-second window ever holds
/// more than `n` requests of this client, retries included. Each caller takes the next free
/// slot and sleeps until it (tokio's timer: paused time in tests moves it too).
pub(crate) struct Limiter {
    per_second: NonZeroU32,
    interval: Duration,
    /// The earliest instant the next request may go.
    next: Mutex<Option<Instant>>,
}

impl Limiter {
    pub(crate) fn new(per_second: NonZeroU32) -> Self {
        Self {
            per_second,
            interval: Duration::from_secs(1) / per_second.get(),
            next: Mutex::new(None),
        }
    }

    /// Waits until the next request may go.
    pub(crate) async fn until_ready(&self) {
        let slot = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let slot = next.map_or(now, |n| n.max(now));
            *next = Some(slot + self.interval);
            slot
        };
        sleep_until(slot).await;
    }
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_callers_one_interval_apart() {
        let l = Limiter::new(NonZeroU32::new(4).unwrap());
        let t0 = Instant::now();
        for _ in 0..5 {
            l.until_ready().await;
        }
        assert_eq!(
            t0.elapsed(),
            Duration::from_millis(1000),
            "5 requests at 4/s: 4 gaps"
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
        let t1 = Instant::now();
        l.until_ready().await;
        assert_eq!(
            t1.elapsed(),
            Duration::ZERO,
            "an idle limiter lets the next one go at once"
        );
    }
}
