//! A client that stops reading cannot hold the server: the send time-out closes its
//! connection, and one connection serves a bounded number of pipelined requests.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

use crate::rede::{GUARDA, ler_ate_fechar, servidores};

/// `n` keep-alive `GET path` requests, back to back.
fn em_fila(path: &str, n: usize) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .repeat(n)
        .into_bytes()
}

/// A connection that pipelines 60 `GET /openapi.json` (about 100 KB each) and never reads,
/// with a small receive buffer so that the server's writes stall soon.
async fn leitor_parado(addr: std::net::SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4_096).unwrap();
    let mut tcp = socket.connect(addr).await.unwrap();
    tcp.write_all(&em_fila("/openapi.json", 60)).await.unwrap();
    tcp
}

#[tokio::test]
async fn a_fourth_client_is_answered_while_three_stalled_readers_hold_connections() {
    for s in servidores("leitor_parado", |c| {
        c.edge.max_connections = 3;
        c.edge.send_timeout = Duration::from_secs(1);
        // Not the header time-out: the stalled connections sent all their headers.
        c.edge.header_timeout = Duration::from_secs(600);
    })
    .await
    {
        let mut parados = Vec::new();
        for _ in 0..3 {
            parados.push(leitor_parado(s.srv.addr()).await);
        }
        // The fourth client waits in the backlog until the send time-out closes a stalled
        // connection; before that time-out existed it waited as long as they stayed open.
        let r = tokio::time::timeout(GUARDA, s.http.get(s.url("/openapi.json")).send())
            .await
            .unwrap_or_else(|_| panic!("[{}] fourth client never answered", s.nome))
            .unwrap();
        assert_eq!(r.status(), 200, "[{}]", s.nome);
        drop(parados);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn requests_pipelined_past_the_per_connection_bound_are_not_served() {
    for s in servidores("pedidos_por_conexao", |c| {
        c.edge.requests_per_connection = 3;
    })
    .await
    {
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        tcp.write_all(&em_fila("/v1/saldo", 10)).await.unwrap();
        let r = ler_ate_fechar(&mut tcp).await;
        let tudo = format!("{}{}", r.cabecalhos, String::from_utf8_lossy(&r.corpo)).to_lowercase();
        assert_eq!(
            tudo.matches("http/1.1 401").count(),
            3,
            "[{}] {tudo}",
            s.nome
        );
        assert!(tudo.contains("connection: close"), "[{}] {tudo}", s.nome);
        s.srv.shutdown().await;
    }
}
