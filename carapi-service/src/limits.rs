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

    /// True while `ip` (counted per [`chave_endereco`]) is blocked.
    pub fn bloqueado(&self, ip: IpAddr) -> bool {
        self.bloqueados.contains_key(&chave_endereco(ip))
    }

    /// Counts a failed authentication of `ip` (per [`chave_endereco`]); `Err` (and a block)
    /// when it went over the rate.
    pub fn falhou(&self, ip: IpAddr) -> Result<(), Duration> {
        let ip = chave_endereco(ip);
        self.falhas.verificar(ip).inspect_err(|_| {
            self.bloqueados.insert(ip, ());
        })
    }

    /// Forgets the addresses whose failures are old enough to be back at a full burst (an
    /// idle address holds no memory); the reconciliation loop calls it every interval.
    pub fn limpar(&self) {
        self.falhas.limpar();
        self.bloqueados.run_pending_tasks();
    }

    /// Addresses with failures remembered now (for the bound on memory).
    pub fn enderecos(&self) -> usize {
        self.falhas.inner.len()
    }
}

/// The key an address is counted under by the per-address limits: an IPv4 address as is (an
/// IPv4-mapped IPv6 address as its IPv4), an IPv6 address by its /64 prefix (one host is
/// usually given a whole /64, so counting single IPv6 addresses would let it pick a fresh
/// one for every request).
pub fn chave_endereco(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
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

    #[test]
    fn ipv6_addresses_count_per_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(chave_endereco(a), chave_endereco(b));
        assert_ne!(chave_endereco(a), chave_endereco(c));
        let v4: IpAddr = "192.0.2.1".parse().unwrap();
        let mapeado: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(chave_endereco(mapeado), v4);
    }
}
