//! Request rates with governor's GCRA: per account (contract, "Limits": 10 requests per second
//! per key on every endpoint) and per client address for requests that fail authentication
//! (so a flood of bad keys cannot slow the other clients down).

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::money::ContaId;

/// A keyed rate limiter: `n` requests per second per key `K` (an account by default, or a
/// client address: [`LimitadorIp`]), bursts up to `n`.
#[derive(Debug)]
pub struct Limitador<K: Hash + Eq + Clone = ContaId> {
    inner: DefaultKeyedRateLimiter<K>,
    clock: DefaultClock,
}

/// How long an address that went over its failed-authentication rate is refused before its
/// key is even looked up.
pub const BLOQUEIO_IP: Duration = Duration::from_secs(1);

/// Failed authentications per client address: each 401 takes a cell of a per-address
/// [`Limitador`]; an address with none left is blocked for [`BLOQUEIO_IP`], during which its
/// requests are answered 429 before any key lookup.
pub struct LimitadorIp {
    falhas: Limitador<IpAddr>,
    bloqueados: moka::sync::Cache<IpAddr, ()>,
}

impl std::fmt::Debug for LimitadorIp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimitadorIp")
            .field("bloqueados", &self.bloqueados.entry_count())
            .finish()
    }
}

impl LimitadorIp {
    /// `por_segundo` failed authentications per second per address, bursts up to that.
    pub fn new(por_segundo: NonZeroU32) -> Self {
        LimitadorIp {
            falhas: Limitador::new(por_segundo),
            bloqueados: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(BLOQUEIO_IP)
                .build(),
        }
    }

    /// True while `ip` is blocked.
    pub fn bloqueado(&self, ip: IpAddr) -> bool {
        self.bloqueados.contains_key(&ip)
    }

    /// Counts a failed authentication of `ip`; `Err` (and a block) when it went over the rate.
    pub fn falhou(&self, ip: IpAddr) -> Result<(), Duration> {
        self.falhas.verificar(ip).inspect_err(|_| {
            self.bloqueados.insert(ip, ());
        })
    }
}

impl<K: Hash + Eq + Clone> Limitador<K> {
    /// `por_segundo` requests per second per key.
    pub fn new(por_segundo: NonZeroU32) -> Self {
        Limitador {
            inner: RateLimiter::keyed(Quota::per_second(por_segundo)),
            clock: DefaultClock::default(),
        }
    }

    /// `Ok` when the request may proceed; otherwise how long until it would (the `Retry-After`).
    pub fn verificar(&self, chave: K) -> Result<(), Duration> {
        self.inner
            .check_key(&chave)
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
        let l: Limitador = Limitador::new(NonZeroU32::new(10).unwrap());
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
