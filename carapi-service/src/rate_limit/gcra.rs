//! The keyed GCRA (the generic cell rate algorithm) of this process: per account (contract,
//! "Limits": 10 requests per second per key on every endpoint) and per client address for
//! requests that fail authentication ([`super::address`]).
//!
//! GCRA keeps one instant per key, its theoretical arrival time (TAT): a request at `t` is
//! allowed when `TAT - t` is at most the burst tolerance `(n - 1) / n` s, and then moves the
//! TAT one emission interval `1 / n` s past `max(TAT, t)`. So `n` requests pass at once after
//! an idle second and then one every `1 / n` s, the same rule as the PostgreSQL store's shared
//! limiter and the SDK's client-side limiter.

use std::collections::HashMap;
use std::hash::Hash;
use std::hash::{BuildHasher, RandomState};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::money::ContaId;

/// A keyed rate limiter: `n` requests per second per key `K` (an account by default, or a
/// client address: `AddressLimiter`), bursts up to `n`.
#[derive(Debug)]
pub struct RateLimiter<K: Hash + Eq + Clone = ContaId> {
    /// Emission interval: `1 / n` s.
    interval: Duration,
    /// Burst tolerance: `(n - 1) / n` s.
    tolerance: Duration,
    /// The TAT of each key, in shards so that concurrent requests rarely wait on one lock.
    slices: Box<[Mutex<HashMap<K, Instant>>]>,
    hasher: RandomState,
}

/// Shards of a [`RateLimiter`]'s table.
const SHARDS: usize = 16;

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// `per_second` requests per second per key.
    pub(crate) fn new(per_second: NonZeroU32) -> Self {
        let interval = Duration::from_secs(1) / per_second.get();
        RateLimiter {
            interval,
            tolerance: interval * (per_second.get() - 1),
            slices: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
        }
    }

    /// `Ok` when the request may proceed (and it is counted); otherwise how long until it would
    /// (the `Retry-After`), and nothing is counted.
    pub(crate) fn check(&self, chave: K) -> Result<(), Duration> {
        self.check_at(chave, Instant::now())
    }

    /// [`RateLimiter::check`] at the instant `now`.
    fn check_at(&self, chave: K, now: Instant) -> Result<(), Duration> {
        let mut slice = self.shard(&chave);
        let tat = slice.get(&chave).map_or(now, |t| (*t).max(now));
        let ahead = tat - now;
        if ahead > self.tolerance {
            return Err(ahead - self.tolerance);
        }
        slice.insert(chave, tat + self.interval);
        Ok(())
    }

    /// Forgets the keys that have been idle long enough to be back at full burst.
    pub fn clear(&self) {
        let now = Instant::now();
        for f in &self.slices {
            lock(f).retain(|_, tat| *tat > now);
        }
    }

    /// Keys remembered now.
    pub(crate) fn len(&self) -> usize {
        self.slices.iter().map(|f| lock(f).len()).sum()
    }

    fn shard(&self, chave: &K) -> std::sync::MutexGuard<'_, HashMap<K, Instant>> {
        // The remainder is below FATIAS: the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation)]
        let i = (self.hasher.hash_one(chave) % SHARDS as u64) as usize;
        lock(&self.slices[i])
    }
}

/// The table of a shard, even after a panic elsewhere left its lock poisoned (the map holds
/// only instants: no invariant can be half-updated).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleventh_request_in_a_second_waits() {
        let l: RateLimiter = RateLimiter::new(NonZeroU32::new(10).unwrap());
        for _ in 0..10 {
            assert!(l.check(ContaId(1)).is_ok());
        }
        let wait = l.check(ContaId(1)).unwrap_err();
        assert!(wait <= Duration::from_millis(100));
        assert!(l.check(ContaId(2)).is_ok(), "other keys are independent");
    }

    #[test]
    fn a_burst_of_n_then_one_per_interval_and_idle_keys_are_forgotten() {
        let l: RateLimiter = RateLimiter::new(NonZeroU32::new(10).unwrap());
        let t0 = Instant::now();
        for _ in 0..10 {
            assert!(l.check_at(ContaId(1), t0).is_ok());
        }
        assert_eq!(l.check_at(ContaId(1), t0), Err(Duration::from_millis(100)));
        let depois = t0 + Duration::from_millis(100);
        assert!(l.check_at(ContaId(1), depois).is_ok());
        assert_eq!(
            l.check_at(ContaId(1), depois),
            Err(Duration::from_millis(100))
        );
        assert_eq!(l.len(), 1);
        let l2: RateLimiter = RateLimiter::new(NonZeroU32::new(1000).unwrap());
        assert!(l2.check(ContaId(3)).is_ok());
        std::thread::sleep(Duration::from_millis(5));
        l2.clear();
        assert!(l2.len() == 0, "an idle key at full burst is forgotten");
    }
}
