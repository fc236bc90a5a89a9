//! The shorter header time-out under pressure (`http/server.rs`, `header_timeout_for`): with
//! every connection taken by sockets that send half a request head and stop, the ones accepted
//! while over half the connections were open are closed before any of the earlier ones (a
//! quarter of the header time-out against the whole), and a legitimate client that waited for a
//! connection is then served. Counted by the order in which the server closed the sockets, never
//! by seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::server::{Server, databases};

/// Connections at most; the first half are accepted without pressure.
const MAXIMO: usize = 16;

/// Reads `tcp` until the server closes it; returns the order of the close among all sockets.
async fn closing(mut tcp: TcpStream, order: Arc<AtomicUsize>) -> usize {
    let mut buf = [0u8; 256];
    loop {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return order.fetch_add(1, Ordering::SeqCst),
            Ok(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_pressure_slow_headers_are_closed_sooner_and_a_client_is_served() {
    let database = databases("pressao_cabecalho").await.remove(0);
    let s = Server::com(
        &database,
        |c| {
            c.edge.max_connections = MAXIMO;
            c.edge.header_timeout = Duration::from_secs(4);
            c.edge.unfinished_per_address = None;
            c.edge.connections_per_address = None;
        },
        |p| p,
    )
    .await;
    let c = s.conta(10).await;
    let destination = s.server.addr();
    let order = Arc::new(AtomicUsize::new(0));
    let mut watchers = Vec::new();
    for _ in 0..MAXIMO {
        let mut tcp = TcpStream::connect(destination).await.unwrap();
        tcp.write_all(b"GET /v1/saldo HTTP/1.1\r\nHo")
            .await
            .unwrap();
        // Each accepted in turn: the server counts the open connections when it accepts.
        tokio::time::sleep(Duration::from_millis(30)).await;
        watchers.push(tokio::spawn(closing(tcp, order.clone())));
    }
    // Every connection is taken: this client waits in the backlog for one to be freed.
    let (st, v) = s.get(&c.api_key, "/v1/saldo").await;
    assert_eq!(st, 200, "{v}");
    let mut orders = Vec::new();
    for v in watchers {
        orders.push(v.await.unwrap());
    }
    let (antes, under_pressure) = orders.split_at(MAXIMO / 2);
    // Accepted at 8 open or fewer: the whole header time-out; from the 9th on: a quarter.
    let oldest_first = *antes.iter().min().unwrap();
    let pressed_before = under_pressure.iter().filter(|o| **o < oldest_first).count();
    assert_eq!(
        pressed_before,
        MAXIMO / 2,
        "sockets accepted under pressure closed before the first earlier one: {orders:?}"
    );
}
