//! The client-side rate limiter, so that a batch never meets a 429 it caused itself.

use std::collections::VecDeque;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// The contract's rate limit: 10 requests per second per key (contract, "Limits").
pub const DEFAULT_RATE_LIMIT: NonZeroU32 = NonZeroU32::new(10).expect("10 is not zero");

/// At most `n` requests in any one-second window, retries included: the first `n` go at once
/// (a burst, as the contract's 10 per second allows), and request `k + n` goes one second after
/// request `k`. Each caller takes the next free slot and sleeps until it (tokio's timer: paused
/// time in tests moves it too).
pub(crate) struct Limiter {
    per_second: NonZeroU32,
    /// The slots of the last `n` requests, oldest first.
    slots: Mutex<VecDeque<Instant>>,
}

impl Limiter {
    pub(crate) fn new(per_second: NonZeroU32) -> Self {
        Self {
            per_second,
            slots: Mutex::new(VecDeque::with_capacity(per_second.get() as usize)),
        }
    }

    /// Waits until the next request may go.
    pub(crate) async fn until_ready(&self) {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let n = self.per_second.get() as usize;
            let slot = if slots.len() < n {
                now
            } else {
                let oldest = slots.pop_front().unwrap_or(now);
                (oldest + Duration::from_secs(1)).max(now)
            };
            slots.push_back(slot);
            slot
        };
        if slot > Instant::now() {
            sleep_until(slot).await;
        }
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
    async fn a_burst_of_n_then_no_window_of_a_second_holds_more_than_n() {
        let l = Limiter::new(NonZeroU32::new(10).unwrap());
        let t0 = Instant::now();
        let mut saidas = Vec::new();
        for _ in 0..25 {
            l.until_ready().await;
            saidas.push(t0.elapsed());
        }
        assert!(
            saidas[..10].iter().all(|d| d.is_zero()),
            "the first 10 go at once: {saidas:?}"
        );
        assert_eq!(saidas[10], Duration::from_secs(1));
        assert_eq!(saidas[24], Duration::from_secs(2));
        for (k, d) in saidas.iter().enumerate().skip(10) {
            assert!(*d >= saidas[k - 10] + Duration::from_secs(1), "{saidas:?}");
        }
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
