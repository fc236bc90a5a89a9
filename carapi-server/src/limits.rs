//! The per-key request rate (contract, "Limits": 10 requests per second per key on every
//! endpoint), with governor's GCRA keyed by account.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::store::ContaId;

/// A keyed rate limiter: `n` requests per second per account, bursts up to `n`.
#[derive(Debug)]
pub struct Limitador {
    inner: DefaultKeyedRateLimiter<ContaId>,
    clock: DefaultClock,
}

impl Limitador {
    /// `por_segundo` requests per second per account.
    pub fn new(por_segundo: NonZeroU32) -> Self {
        Limitador {
            inner: RateLimiter::keyed(Quota::per_second(por_segundo)),
            clock: DefaultClock::default(),
        }
    }

    /// `Ok` when the request may proceed; otherwise how long until it would (the `Retry-After`).
    pub fn verificar(&self, conta: ContaId) -> Result<(), Duration> {
        self.inner
            .check_key(&conta)
            .map_err(|nao| nao.wait_time_from(self.clock.now()))
    }

    /// Forgets accounts that have been idle long enough to be back at full burst.
    pub fn limpar(&self) {
        self.inner.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleventh_request_in_a_second_waits() {
        let l = Limitador::new(NonZeroU32::new(10).unwrap());
        for _ in 0..10 {
            assert!(l.verificar(ContaId(1)).is_ok());
        }
        let espera = l.verificar(ContaId(1)).unwrap_err();
        assert!(espera <= Duration::from_millis(100));
        assert!(
            l.verificar(ContaId(2)).is_ok(),
            "other keys are independent"
        );
    }
}
