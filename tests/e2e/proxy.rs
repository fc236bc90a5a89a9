//! A TCP proxy between the SDK and the reference server that can lose an answer after the
//! server produced it (and so after it charged the lookup), or hold a request until released.
//!
//! One HTTP request per connection: the proxy reads the request head of each new connection to
//! decide what to do with it, and asks the server to close the connection after its answer
//! (`Connection: close`), so that every request of a client arrives on a new connection.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// What the proxy does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Forwards both ways.
    Pass,
    /// Forwards the request, waits for the first bytes of the answer (the server has answered,
    /// so a 200 has been charged), then closes the client's connection without them.
    LoseReply,
    /// Holds the request until [`Proxy::release`], then forwards both ways.
    Hold,
}

type Rule = Box<dyn Fn(&str) -> Action + Send + Sync>;

/// A running proxy; stops when dropped (its tasks end with the test's runtime).
pub struct Proxy {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    rule: Arc<Mutex<Rule>>,
    release: Arc<Semaphore>,
    holding: Arc<Notify>,
}

impl Proxy {
    /// Starts a proxy to `destino` (`http://host:port`) applying `regra` to each request line
    /// (`GET /v1/car/... HTTP/1.1`).
    pub async fn new_for(
        destination: &str,
        rule: impl Fn(&str) -> Action + Send + Sync + 'static,
    ) -> Self {
        let destination = destination
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let rule: Arc<Mutex<Rule>> = Arc::new(Mutex::new(Box::new(rule)));
        let release = Arc::new(Semaphore::new(0));
        let holding = Arc::new(Notify::new());
        let (r, l, s) = (rule.clone(), release.clone(), holding.clone());
        tokio::spawn(async move {
            while let Ok((client_addr, _)) = listener.accept().await {
                let (destination, r, l, s) = (destination.clone(), r.clone(), l.clone(), s.clone());
                tokio::spawn(async move {
                    let _ = connection(client_addr, &destination, &r, &l, &s).await;
                });
            }
        });
        Self {
            base_url,
            rule,
            release,
            holding,
        }
    }

    /// Replaces the rule.
    pub fn rule(&self, rule: impl Fn(&str) -> Action + Send + Sync + 'static) {
        *self.rule.lock().unwrap() = Box::new(rule);
    }

    /// Returns once a request is being held ([`Action::Hold`]).
    pub async fn holding(&self) {
        self.holding.notified().await;
    }

    /// Lets one held request through.
    pub fn release(&self) {
        self.release.add_permits(1);
    }
}

async fn connection(
    mut client_addr: TcpStream,
    destination: &str,
    rule: &Mutex<Rule>,
    release: &Semaphore,
    holding: &Notify,
) -> std::io::Result<()> {
    let head = read_head(&mut client_addr).await?;
    let line = String::from_utf8_lossy(&head);
    let line = line.lines().next().unwrap_or_default().to_owned();
    let action = (rule.lock().unwrap())(&line);
    if action == Action::Hold {
        holding.notify_one();
        release.acquire().await.unwrap().forget();
    }
    let mut server = TcpStream::connect(destination).await?;
    server.write_all(&one_request_per_connection(head)).await?;
    if action == Action::LoseReply {
        let mut buf = [0u8; 1];
        server.read_exact(&mut buf).await?;
        // The answer exists: drop it, and the client's connection with it.
        return Ok(());
    }
    tokio::io::copy_bidirectional(&mut client_addr, &mut server).await?;
    Ok(())
}

/// The head with `Connection: close` after the request line: the server closes the connection
/// after its answer, so the client's next request opens a new one and the rule sees every
/// request (an SDK that reads the prices first would otherwise send its lookup on the same
/// kept-alive connection, past the rule).
fn one_request_per_connection(head: Vec<u8>) -> Vec<u8> {
    let Some(end) = head.windows(2).position(|w| w == b"\r\n") else {
        return head;
    };
    let mut fresh = Vec::with_capacity(head.len() + 19);
    fresh.extend_from_slice(&head[..end + 2]);
    fresh.extend_from_slice(b"Connection: close\r\n");
    fresh.extend_from_slice(&head[end + 2..]);
    fresh
}

/// Reads up to the end of the request head (`\r\n\r\n`); the SDK's GETs have no body.
async fn read_head(client_addr: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = client_addr.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

/// An HTTP client that opens one connection per request (no idle connections kept), for
/// [`carapi_sdk::ClientBuilder::http_client`].
pub fn client_without_reuse() -> carapi_sdk::reqwest::Client {
    carapi_sdk::reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}
