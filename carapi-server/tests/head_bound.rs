//! The bound of a request's head per connection (`Edge::max_header_bytes`): past it the
//! answer is 431 and the connection closes, so unfinished headers from many sockets cannot
//! hold more memory than the bound each (the memory figure: `cargo bench -p carapi-tests
//! --bench figures -- cabecalho`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

use crate::server::{Server, databases};

/// Sends from `origem` a request whose head is `tamanho` bytes of one header and never ends;
/// the status line the server answered (`""` when it closed without one).
async fn endless_header(destination: SocketAddr, origin: IpAddr, size: usize) -> String {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(origin, 0)).unwrap();
    let s = socket.connect(destination).await.unwrap();
    let (mut read, mut write) = s.into_split();
    let send = tokio::spawn(async move {
        let _ = write
            .write_all(b"GET /v1/saldo HTTP/1.1\r\nHost: carapi\r\nX-Enchimento: ")
            .await;
        let block = vec![b'a'; 8 * 1024];
        let mut sent = 0;
        while sent < size {
            if write.write_all(&block).await.is_err() {
                return;
            }
            sent += block.len();
        }
        // Unfinished: keep the socket open without ending the head.
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), read.read_to_end(&mut response)).await;
    send.abort();
    String::from_utf8_lossy(&response)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_past_the_bound_is_431_from_every_address_and_one_under_it_is_served() {
    let database = databases("cabecalho_431").await.remove(0);
    let s = Server::new(&database).await;
    let c = s.conta(10).await;
    let destination = s.server.addr();
    // 390 KB unfinished heads from 10 loopback addresses, 3 sockets each: every one is 431.
    let mut tasks = Vec::new();
    for i in 0..30u8 {
        let origin = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + i % 10));
        tasks.push(tokio::spawn(endless_header(
            destination,
            origin,
            390 * 1024,
        )));
    }
    for t in tasks {
        let line = t.await.unwrap();
        assert!(line.starts_with("HTTP/1.1 431"), "{line:?}");
    }
    // A head under the bound (a 20 KB header) is served.
    let r = s
        .http
        .get(format!("{}/v1/saldo", s.server.base_url()))
        .bearer_auth(&c.api_key)
        .header("x-enchimento", "a".repeat(20_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}
