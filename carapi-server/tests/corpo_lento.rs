//! A slow body cannot hold a connection slot unless its request's credentials are plausible:
//! `/v1` reads a body only after the key was checked, the webhook only after its signature
//! header's form and timestamp. Counted, not timed: with `--conexoes-maximas 3` and a body
//! time-out far longer than the guard, three slow bodies with bad credentials are each
//! answered 401 and a fourth client is served, all within the guard.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::rede::servidores;

/// How long each client waits for its answer: far under the body time-out below.
const ESPERA: Duration = Duration::from_secs(5);

/// Sends a request head announcing a 1,000-byte body and 5 bytes of it; the status the server
/// answered within [`ESPERA`] (0 for none), the socket kept open meanwhile.
async fn corpo_lento(addr: std::net::SocketAddr, cabecalhos: &str, path: &str) -> u16 {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let pedido = format!(
        "POST {path} HTTP/1.1\r\nHost: carapi\r\nContent-Type: application/json\r\n{cabecalhos}Content-Length: 1000\r\n\r\n{{\"a\":"
    );
    tcp.write_all(pedido.as_bytes()).await.unwrap();
    let mut lido = Vec::new();
    let _ = tokio::time::timeout(ESPERA, async {
        let mut buf = [0u8; 1024];
        while !lido.windows(2).any(|w| w == b"\r\n") {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lido.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&lido)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_with_bad_credentials_do_not_keep_a_fourth_client_waiting() {
    for s in servidores("corpo_lento", |c| {
        c.edge.max_connections = 3;
        c.edge.body_timeout = Duration::from_secs(120);
    })
    .await
    {
        let c = s.conta(10).await;
        let addr = s.srv.addr();
        let antiga = (chrono::Utc::now() - chrono::Duration::hours(1)).timestamp();
        let lentos = [
            (
                "Authorization: Bearer car_errada\r\n".to_owned(),
                "/v1/recarga",
            ),
            (String::new(), "/webhooks/pix"),
            (
                format!("X-Carapi-Signature: t={antiga},v1={}\r\n", "0".repeat(64)),
                "/webhooks/pix",
            ),
        ];
        let tarefas: Vec<_> = lentos
            .into_iter()
            .map(|(h, p)| tokio::spawn(async move { corpo_lento(addr, &h, p).await }))
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let quarto = tokio::time::timeout(
            ESPERA,
            s.http
                .get(s.url("/v1/saldo"))
                .bearer_auth(&c.api_key)
                .send(),
        )
        .await;
        let quarto_ok = quarto.is_ok_and(|r| r.is_ok_and(|r| r.status() == 200));
        let mut servidos = usize::from(quarto_ok);
        let mut status = Vec::new();
        for t in tarefas {
            let st = t.await.unwrap();
            status.push(st);
            servidos += usize::from(st == 401);
        }
        eprintln!(
            "[{}] slow bodies answered {status:?}, fourth client served: {quarto_ok}",
            s.nome
        );
        assert_eq!(servidos, 4, "[{}] answered within {ESPERA:?}", s.nome);
        s.srv.shutdown().await;
    }
}
