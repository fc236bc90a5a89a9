//! The client address of a request, as the limits count it.
//!
//! The socket's peer, unless the peer is one of the trusted reverse proxies
//! ([`super::edge::Edge::trusted_proxies`], none by default): then the address the proxy
//! reports, from `Forwarded` (RFC 7239, its `for=` parameters) or else `X-Forwarded-For`.
//! Those lists are read right to left, skipping the trusted proxies, so a client cannot choose
//! its address by sending the header itself (a proxy appends to what it received; only what a
//! trusted proxy appended is believed). A value that is not an address (`unknown`, an
//! obfuscated name) ends the walk at the last trusted hop.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;

/// The client address of `req` (see the module documentation); `None` when it was not served
/// over a socket (through `oneshot`).
pub fn client_address(req: &Request, proxies: &[IpAddr]) -> Option<IpAddr> {
    let par = req.extensions().get::<ConnectInfo<SocketAddr>>()?.0.ip();
    Some(behind_proxies(par, req.headers(), proxies))
}

/// The client address behind `par` given `headers` and the trusted `proxies`.
pub(crate) fn behind_proxies(par: IpAddr, headers: &HeaderMap, proxies: &[IpAddr]) -> IpAddr {
    if !is_trusted(par, proxies) {
        return par;
    }
    let saltos = hops(headers);
    let mut client_addr = par;
    for salto in saltos.iter().rev() {
        match salto {
            Some(ip) if is_trusted(*ip, proxies) => client_addr = *ip,
            Some(ip) => return *ip,
            None => return client_addr,
        }
    }
    client_addr
}

fn is_trusted(ip: IpAddr, proxies: &[IpAddr]) -> bool {
    let ip = ip.to_canonical();
    proxies.iter().any(|p| p.to_canonical() == ip)
}

/// The hops the proxies listed, oldest first (`None` for a value that is not an address):
/// from every `Forwarded` header when there is one, else from every `X-Forwarded-For`.
fn hops(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<Option<IpAddr>> = headers
        .get_all("forwarded")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','))
        .map(|elemento| {
            elemento
                .split(';')
                .filter_map(|par| par.trim().split_once('='))
                .find(|(nome, _)| nome.trim().eq_ignore_ascii_case("for"))
                .and_then(|(_, valor)| read_address(valor))
        })
        .collect();
    if !forwarded.is_empty() {
        return forwarded;
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','))
        .map(read_address)
        .collect()
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

    fn h(nome: &'static str, valor: &'static str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(nome, valor.parse().unwrap());
        m
    }

    #[test]
    fn only_a_trusted_peer_is_believed_and_only_its_own_hop() {
        let proxy: IpAddr = "10.0.0.1".parse().unwrap();
        let client_addr: IpAddr = "203.0.113.7".parse().unwrap();
        let xff = h("x-forwarded-for", "198.51.100.1, 203.0.113.7");
        assert_eq!(behind_proxies(proxy, &xff, &[]), proxy);
        assert_eq!(behind_proxies(proxy, &xff, &[proxy]), client_addr);
        let fw = h(
            "forwarded",
            "for=198.51.100.1, for=\"[2001:db8::1]:4711\";proto=https",
        );
        assert_eq!(
            behind_proxies(proxy, &fw, &[proxy]),
            "2001:db8::1".parse::<IpAddr>().unwrap()
        );
        let desconhecido = h("forwarded", "for=unknown");
        assert_eq!(behind_proxies(proxy, &desconhecido, &[proxy]), proxy);
    }
}
