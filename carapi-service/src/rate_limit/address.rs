//! Failed authentications per client address: a flood of bad keys from one address is refused
//! before any key lookup, so it cannot slow the other clients down.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use super::RateLimiter;

/// How long an address that went over its failed-authentication rate is refused before its
/// key is even looked up.
pub const IP_BLOCK: Duration = Duration::from_secs(1);

/// Failed authentications per client address: each 401 takes a cell of a per-address
/// [`RateLimiter`]; an address with none left is blocked for [`IP_BLOCK`], during which its
/// requests are answered 429 before any key lookup.
pub struct AddressLimiter {
    faults: RateLimiter<IpAddr>,
    blocked: moka::sync::Cache<IpAddr, ()>,
}

impl std::fmt::Debug for AddressLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimitadorIp")
            .field("bloqueados", &self.blocked.entry_count())
            .finish()
    }
}

impl AddressLimiter {
    /// `per_second` failed authentications per second per address, bursts up to that.
    pub(crate) fn new(per_second: NonZeroU32) -> Self {
        AddressLimiter {
            faults: RateLimiter::new(per_second),
            blocked: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(IP_BLOCK)
                .build(),
        }
    }

    /// True while `ip` (counted per [`address_key`]) is blocked.
    pub(crate) fn is_blocked(&self, ip: IpAddr) -> bool {
        self.blocked.contains_key(&address_key(ip))
    }

    /// Counts a failed authentication of `ip` (per [`address_key`]); `Err` (and a block)
    /// when it went over the rate.
    pub(crate) fn failed(&self, ip: IpAddr) -> Result<(), Duration> {
        let ip = address_key(ip);
        self.faults.check(ip).inspect_err(|_| {
            self.blocked.insert(ip, ());
        })
    }

    /// Forgets the addresses whose failures are old enough to be back at a full burst (an
    /// idle address holds no memory); the reconciliation loop calls it every interval.
    pub fn clear(&self) {
        self.faults.clear();
        self.blocked.run_pending_tasks();
    }

    /// Addresses with failures remembered now (for the bound on memory).
    pub fn addresses(&self) -> usize {
        self.faults.len()
    }
}

/// The key an address is counted under by the per-address limits: an IPv4 address as is (an
/// IPv4-mapped IPv6 address as its IPv4), an IPv6 address by its /64 prefix (one host is
/// usually given a whole /64, so counting single IPv6 addresses would let it pick a fresh
/// one for every request).
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_per_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        assert_ne!(address_key(a), address_key(c));
        let v4: IpAddr = "192.0.2.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(address_key(mapped), v4);
    }
}
