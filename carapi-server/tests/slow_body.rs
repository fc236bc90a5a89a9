//! A slow body cannot hold a connection slot unless its request's credentials are plausible:
//! `/v1` reads a body only after the key was checked, the webhook only after its signature
//! header's form and timestamp. Counted, not timed: with `--conexoes-maximas 3` and a body
//! time-out far longer than the guard, three slow bodies with bad credentials are each
//! answered 401 and a fourth client is served, all within the guard.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::network::servers;

/// How long each client waits for its answer: far under the body time-out below.
const WAIT: Duration = Duration::from_secs(5);

/// Sends a request head announcing a 1,000-byte body and 5 bytes of it; the status the server
/// answered within [`WAIT`] (0 for none), the socket kept open meanwhile.
async fn slow_body(addr: std::net::SocketAddr, headers: &str, path: &str) -> u16 {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let requested = format!(
        "POST {path} HTTP/1.1\r\nHost: carapi\r\nContent-Type: application/json\r\n{headers}Content-Length: 1000\r\n\r\n{{\"a\":"
    );
    tcp.write_all(requested.as_bytes()).await.unwrap();
    let mut chunk = Vec::new();
    let _ = tokio::time::timeout(WAIT, async {
        let mut buf = [0u8; 1024];
        while !chunk.windows(2).any(|w| w == b"\r\n") {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => chunk.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&chunk)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_with_bad_credentials_do_not_keep_a_fourth_client_waiting() {
    for s in servers("corpo_lento", |c| {
        c.edge.max_connections = 3;
        c.edge.body_timeout = Duration::from_secs(120);
    })
    .await
    {
        let c = s.conta(10).await;
        let addr = s.srv.addr();
        let old = (chrono::Utc::now() - chrono::Duration::hours(1)).timestamp();
        let slow = [
            (
                "Authorization: Bearer car_errada\r\n".to_owned(),
                "/v1/recarga",
            ),
            (String::new(), "/webhooks/pix"),
            (
                format!("X-Carapi-Signature: t={old},v1={}\r\n", "0".repeat(64)),
                "/webhooks/pix",
            ),
        ];
        let tasks: Vec<_> = slow
            .into_iter()
            .map(|(h, p)| tokio::spawn(async move { slow_body(addr, &h, p).await }))
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let fourth = tokio::time::timeout(
            WAIT,
            s.http
                .get(s.url("/v1/saldo"))
                .bearer_auth(&c.api_key)
                .send(),
        )
        .await;
        let fourth_ok = fourth.is_ok_and(|r| r.is_ok_and(|r| r.status() == 200));
        let mut served = usize::from(fourth_ok);
        let mut status = Vec::new();
        for t in tasks {
            let st = t.await.unwrap();
            status.push(st);
            served += usize::from(st == 401);
        }
        eprintln!(
            "[{}] slow bodies answered {status:?}, fourth client served: {fourth_ok}",
            s.name
        );
        assert_eq!(served, 4, "[{}] answered within {WAIT:?}", s.name);
        s.srv.shutdown().await;
    }
}
