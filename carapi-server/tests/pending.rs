//! The bound of connections per address whose first request's head has not arrived
//! (`Edge::unfinished_per_address`), applied while over half the connections are open, counted
//! by refusals: past it an address's new connections are closed at once, another address is
//! served, and a trusted proxy's address is never counted.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::server::{Server, databases};

const LIMITE: usize = 5;
const SOCKETS: usize = 15;

/// A socket from `origem` that sends half a request head (`None`: reset while connecting).
async fn half_header(destination: SocketAddr, origin: IpAddr) -> Option<TcpStream> {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(SocketAddr::new(origin, 0)).unwrap();
    let mut tcp = s.connect(destination).await.ok()?;
    let _ = tcp.write_all(b"GET /v1/saldo HTTP/1.1\r\nHo").await;
    Some(tcp)
}

/// Whether the server closed `tcp` within half a second (a refusal).
async fn refused(tcp: &mut Option<TcpStream>) -> bool {
    let Some(tcp) = tcp else { return true };
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(Duration::from_millis(500), tcp.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// `n` half heads from `origem`; how many were refused.
async fn refusals(
    destination: SocketAddr,
    origin: IpAddr,
    n: usize,
) -> (usize, Vec<Option<TcpStream>>) {
    let mut open = Vec::new();
    for _ in 0..n {
        open.push(half_header(destination, origin).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // All at once: one after the other, the last would be read past the header time-out.
    let r = futures::future::join_all(open.iter_mut().map(refused))
        .await
        .into_iter()
        .filter(|x| *x)
        .count();
    (r, open)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_requests_are_bounded_per_address_but_never_for_a_trusted_proxy() {
    let database = databases("pendentes_por_endereco").await.remove(0);
    let proxy = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 7));
    let s = Server::com(
        &database,
        |c| {
            c.edge.unfinished_per_address = Some(LIMITE);
            c.edge.max_connections = 40;
            c.edge.trusted_proxies = vec![proxy.into()];
        },
        |p| p,
    )
    .await;
    let c = s.conta(10).await;
    let destination = s.server.addr();
    // The trusted proxy holds 21 unfinished heads (over half of 40: pressure) and none is
    // refused, though it is past the bound of 5.
    let (r, _do_proxy) = refusals(destination, proxy, 21).await;
    assert_eq!(r, 0, "a trusted proxy's connections are not refused");
    let slow = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 5));
    let (r, open) = refusals(destination, slow, SOCKETS).await;
    assert_eq!(r, SOCKETS - LIMITE, "refusals from the slow address");
    // Another address is served meanwhile.
    let (st, v) = s.get(&c.api_key, "/v1/saldo").await;
    assert_eq!(st, 200, "{v}");
    // One of the slow address's heads completes: it stops counting, one more is admitted.
    let mut admitted = open.into_iter().flatten().next().unwrap();
    admitted.write_all(b"st: x\r\n\r\n").await.unwrap();
    let mut buf = [0u8; 16];
    let _ = admitted.read(&mut buf).await;
    let mut fresh = half_header(destination, slow).await;
    assert!(!refused(&mut fresh).await, "admitted once a head completed");
}
