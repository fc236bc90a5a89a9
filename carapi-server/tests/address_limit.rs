//! The per-address limit of failed authentications refuses only further failures; behind a
//! trusted proxy the client address comes from `X-Forwarded-For` / `Forwarded`; IPv6
//! addresses count per /64; idle addresses are forgotten.

use std::num::NonZeroU32;
use std::time::Duration;

use crate::network::{GUARD, Server, servers};

/// The status of `GET /v1/saldo` with `key` and the extra header `header`.
async fn saldo(s: &Server, key: &str, header: Option<(&str, &str)>) -> u16 {
    let mut r = s.http.get(s.url("/v1/saldo")).bearer_auth(key);
    if let Some((name, valor)) = header {
        r = r.header(name, valor);
    }
    r.send().await.unwrap().status().as_u16()
}

/// Wrong keys from the client named by `header` until one is answered 429.
async fn block(s: &Server, header: Option<(&str, &str)>) {
    for i in 0..24 {
        if saldo(s, &format!("car_errada_{i}"), header).await == 429 {
            return;
        }
    }
    panic!("[{}] 24 wrong keys never got 429", s.name);
}

#[tokio::test]
async fn a_valid_key_from_a_blocked_address_is_served_and_further_failures_are_refused() {
    for s in servers("bloqueio_chave_valida", |c| {
        c.edge.unauthenticated_per_second = NonZeroU32::new(5);
    })
    .await
    {
        let c = s.conta(100).await;
        block(&s, None).await;
        assert_eq!(saldo(&s, &c.api_key, None).await, 200, "[{}]", s.name);
        assert_eq!(saldo(&s, "car_errada", None).await, 429, "[{}]", s.name);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn forwarded_addresses_are_believed_only_from_a_trusted_proxy_and_ipv6_counts_per_64() {
    let xff = |v: &'static str| Some(("x-forwarded-for", v));
    // Default: the header is ignored, every request counts for the socket's peer.
    for s in servers("proxy_desligado", |c| {
        c.edge.unauthenticated_per_second = NonZeroU32::new(5);
    })
    .await
    {
        block(&s, xff("203.0.113.7")).await;
        assert_eq!(
            saldo(&s, "x", xff("203.0.113.8")).await,
            429,
            "[{}]",
            s.name
        );
        s.srv.shutdown().await;
    }
    // Behind a trusted proxy (the loopback peer): each forwarded client counts apart.
    for s in servers("proxy_confiavel", |c| {
        c.edge.unauthenticated_per_second = NonZeroU32::new(5);
        c.edge.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await
    {
        block(&s, xff("203.0.113.7")).await;
        assert_eq!(
            saldo(&s, "x", xff("203.0.113.8")).await,
            401,
            "[{}]",
            s.name
        );
        // A client prepending its own address gains nothing: the proxy's hop is read.
        let forged = xff("198.51.100.1, 203.0.113.7");
        assert_eq!(saldo(&s, "x", forged).await, 429, "[{}]", s.name);
        // IPv6: one /64 is one client.
        block(&s, xff("2001:db8:0:1::1")).await;
        assert_eq!(saldo(&s, "x", xff("2001:db8:0:1::ff")).await, 429);
        assert_eq!(saldo(&s, "x", xff("2001:db8:0:2::1")).await, 401);
        // A client-sent Forwarded is not the named header: it chooses nothing (the blocked
        // client stays blocked, the other is not).
        let two = |xff: &str, fw: &str| {
            s.http
                .get(s.url("/v1/saldo"))
                .bearer_auth("x")
                .header("x-forwarded-for", xff)
                .header("forwarded", format!("for={fw}"))
                .send()
        };
        let r = two("203.0.113.8", "203.0.113.7").await.unwrap();
        assert_eq!(r.status().as_u16(), 401, "[{}] Forwarded chose", s.name);
        let r = two("203.0.113.7", "203.0.113.8").await.unwrap();
        assert_eq!(r.status().as_u16(), 429, "[{}] Forwarded chose", s.name);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn idle_addresses_are_forgotten() {
    for s in servers("enderecos_ociosos", |c| {
        c.edge.unauthenticated_per_second = NonZeroU32::new(20);
        c.edge.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
        c.reconcile_interval = Duration::from_millis(200);
    })
    .await
    {
        for i in 0..50 {
            let client_addr = format!("198.51.100.{i}");
            let r = s
                .http
                .get(s.url("/v1/saldo"))
                .bearer_auth("car_errada")
                .header("x-forwarded-for", client_addr)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401);
        }
        let limiter = s.srv.state().ip_limiter.clone().unwrap();
        assert!(limiter.addresses() > 0, "[{}] nothing counted", s.name);
        let forgotten = async {
            while limiter.addresses() > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::time::timeout(GUARD, forgotten)
            .await
            .unwrap_or_else(|_| panic!("[{}] idle addresses never forgotten", s.name));
        s.srv.shutdown().await;
    }
}
