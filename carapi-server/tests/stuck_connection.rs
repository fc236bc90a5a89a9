//! A client that stops reading cannot hold the server: the send time-out closes its
//! connection, and one connection serves a bounded number of pipelined requests.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::network::{GUARD, read_until_close, servers};

/// `n` keep-alive `GET path` requests, back to back.
fn queued(path: &str, n: usize) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .repeat(n)
        .into_bytes()
}

/// A connection that pipelines 60 `GET /openapi.json` (about 100 KB each) and never reads,
/// with a small receive buffer so that the server's writes stall soon.
async fn stopped_reader(addr: std::net::SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4_096).unwrap();
    let mut tcp = socket.connect(addr).await.unwrap();
    tcp.write_all(&queued("/openapi.json", 60)).await.unwrap();
    tcp
}

#[tokio::test]
async fn a_fourth_client_is_answered_while_three_stalled_readers_hold_connections() {
    for s in servers("leitor_parado", |c| {
        c.edge.max_connections = 3;
        c.edge.send_timeout = Duration::from_secs(1);
        // Not the header time-out: the stalled connections sent all their headers.
        c.edge.header_timeout = Duration::from_secs(600);
    })
    .await
    {
        let mut stopped = Vec::new();
        for _ in 0..3 {
            stopped.push(stopped_reader(s.srv.addr()).await);
        }
        // The fourth client waits in the backlog until the send time-out closes a stalled
        // connection; before that time-out existed it waited as long as they stayed open.
        let r = tokio::time::timeout(GUARD, s.http.get(s.url("/openapi.json")).send())
            .await
            .unwrap_or_else(|_| panic!("[{}] fourth client never answered", s.name))
            .unwrap();
        assert_eq!(r.status(), 200, "[{}]", s.name);
        drop(stopped);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn requests_pipelined_past_the_per_connection_bound_are_not_served() {
    for s in servers("pedidos_por_conexao", |c| {
        c.edge.requests_per_connection = 3;
    })
    .await
    {
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        tcp.write_all(&queued("/v1/saldo", 10)).await.unwrap();
        let r = read_until_close(&mut tcp).await;
        let everything =
            format!("{}{}", r.headers, String::from_utf8_lossy(&r.body)).to_lowercase();
        assert_eq!(
            everything.matches("http/1.1 401").count(),
            3,
            "[{}] {everything}",
            s.name
        );
        assert!(
            everything.contains("connection: close"),
            "[{}] {everything}",
            s.name
        );
        s.srv.shutdown().await;
    }
}
