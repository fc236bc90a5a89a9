//! The client address of a request, as the limits count it.
//!
//! The socket's peer, unless the peer is in one of the trusted reverse-proxy ranges
//! ([`super::edge::Edge::trusted_proxies`], none by default): then the address the proxy
//! reports in the one header the operator named ([`super::edge::Edge::client_header`],
//! `X-Forwarded-For` by default; `Forwarded` reads RFC 7239's `for=`). Every other such header
//! is ignored: nginx appends to `X-Forwarded-For` and passes a client's `Forwarded` through
//! untouched, so reading both would let a client choose. The list is read right to left,
//! skipping the trusted proxies, so a client cannot choose its address by sending the header
//! itself (a proxy appends to what it received; only what a trusted proxy appended is
//! believed). A value that is not an address (`unknown`, an obfuscated name) ends the walk at
//! the last trusted hop.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderMap, HeaderName};
use ipnet::IpNet;

use crate::config::Edge;

/// The client address of `req` (see the module documentation); `None` when it was not served
/// over a socket (through `oneshot`).
pub fn client_address(req: &Request, edge: &Edge) -> Option<IpAddr> {
    let par = req.extensions().get::<ConnectInfo<SocketAddr>>()?.0.ip();
    Some(behind_proxies(
        par,
        req.headers(),
        &edge.client_header,
        &edge.trusted_proxies,
    ))
}

/// The client address behind `par` given `headers`, the header to read and the trusted
/// `proxies`.
pub(crate) fn behind_proxies(
    par: IpAddr,
    headers: &HeaderMap,
    header: &HeaderName,
    proxies: &[IpNet],
) -> IpAddr {
    if !is_trusted(par, proxies) {
        return par;
    }
    let jumps = hops(headers, header);
    let mut client_addr = par;
    for jump in jumps.iter().rev() {
        match jump {
            Some(ip) if is_trusted(*ip, proxies) => client_addr = *ip,
            Some(ip) => return *ip,
            None => return client_addr,
        }
    }
    client_addr
}

/// The header name `s` (`X-Forwarded-For`, `Forwarded`, `X-Real-IP`) for
/// [`Edge::client_header`].
///
/// # Errors
/// A message when `s` is not a valid header name.
pub fn header_name(s: &str) -> Result<HeaderName, String> {
    HeaderName::from_bytes(s.trim().as_bytes())
        .map_err(|_| format!("nome de cabeçalho inválido: {s:?}"))
}

/// True when `ip` is in one of the trusted ranges (an IPv4-mapped IPv6 address as its IPv4).
pub(crate) fn is_trusted(ip: IpAddr, proxies: &[IpNet]) -> bool {
    let ip = ip.to_canonical();
    proxies.iter().any(|p| p.contains(&ip))
}

/// The hops the proxies listed in `cabecalho`, oldest first (`None` for a value that is not
/// an address).
fn hops(headers: &HeaderMap, header: &HeaderName) -> Vec<Option<IpAddr>> {
    let values = headers
        .get_all(header)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','));
    if header.as_str() == "forwarded" {
        return values
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|par| par.trim().split_once('='))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, valor)| read_address(valor))
            })
            .collect();
    }
    values.map(read_address).collect()
}

/// An address as a proxy writes it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `"[2001:db8::1]:4711"`.
fn read_address(valor: &str) -> Option<IpAddr> {
    let v = valor.trim().trim_matches('"');
    if let Ok(ip) = v.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(sa) = v.parse::<SocketAddr>() {
        return Some(sa.ip());
    }
    v.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .and_then(|(ip, _)| ip.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &'static str, valor: &'static str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(name, valor.parse().unwrap());
        m
    }

    fn net(s: &str) -> IpNet {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_peer_is_believed_and_only_its_own_hop() {
        let xff_h = HeaderName::from_static("x-forwarded-for");
        let fw_h = HeaderName::from_static("forwarded");
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let proxies = [net("10.0.0.0/24")];
        let client_addr: IpAddr = "203.0.113.7".parse().unwrap();
        let xff = h("x-forwarded-for", "198.51.100.1, 203.0.113.7");
        assert_eq!(behind_proxies(proxy, &xff, &xff_h, &[]), proxy);
        assert_eq!(behind_proxies(proxy, &xff, &xff_h, &proxies), client_addr);
        let fw = h(
            "forwarded",
            "for=198.51.100.1, for=\"[2001:db8::1]:4711\";proto=https",
        );
        assert_eq!(
            behind_proxies(proxy, &fw, &fw_h, &proxies),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        let unknown = h("forwarded", "for=unknown");
        assert_eq!(behind_proxies(proxy, &unknown, &fw_h, &proxies), proxy);
    }

    #[test]
    fn a_header_the_operator_did_not_name_chooses_nothing() {
        let xff_h = HeaderName::from_static("x-forwarded-for");
        let proxy: IpAddr = "10.0.0.9".parse().unwrap();
        let proxies = [net("10.0.0.0/24")];
        // nginx appended the real client to X-Forwarded-For and passed the client's own
        // Forwarded through: only X-Forwarded-For is read.
        let mut m = h("x-forwarded-for", "203.0.113.7");
        m.insert("forwarded", "for=198.51.100.1".parse().unwrap());
        assert_eq!(
            behind_proxies(proxy, &m, &xff_h, &proxies),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
        // A second trusted hop inside the range is skipped, never taken as the client.
        let m = h("x-forwarded-for", "198.51.100.1, 203.0.113.7, 10.0.0.2");
        assert_eq!(
            behind_proxies(proxy, &m, &xff_h, &proxies),
            "203.0.113.7".parse::<IpAddr>().unwrap()
        );
    }
}
