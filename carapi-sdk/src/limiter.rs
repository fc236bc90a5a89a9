//! The client-side rate limiter (governor), so that a batch never meets a 429 it caused itself.

use std::fmt;
use std::num::NonZeroU32;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

/// The contract's rate limit: 10 requests per second per key (contract, "Limits").
pub const DEFAULT_RATE_LIMIT: NonZeroU32 = NonZeroU32::new(10).expect("10 is not zero");

/// Spaces requests at least `1/n` s apart (GCRA with a burst of 1), so no one-second window
/// ever holds more than `n` requests of this client, retries included.
pub(crate) struct Limiter {
    per_second: NonZeroU32,
    inner: DefaultDirectRateLimiter,
}

impl Limiter {
    pub(crate) fn new(per_second: NonZeroU32) -> Self {
        let quota = Quota::per_second(per_second).allow_burst(NonZeroU32::MIN);
        Self {
            per_second,
            inner: RateLimiter::direct(quota),
        }
    }

    /// Waits until the next request may go.
    pub(crate) async fn until_ready(&self) {
        self.inner.until_ready().await;
    }
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.per_second)
    }
}
