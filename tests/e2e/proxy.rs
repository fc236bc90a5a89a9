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
pub enum Acao {
    /// Forwards both ways.
    Passar,
    /// Forwards the request, waits for the first bytes of the answer (the server has answered,
    /// so a 200 has been charged), then closes the client's connection without them.
    PerderResposta,
    /// Holds the request until [`Proxy::liberar`], then forwards both ways.
    Segurar,
}

type Regra = Box<dyn Fn(&str) -> Acao + Send + Sync>;

/// A running proxy; stops when dropped (its tasks end with the test's runtime).
pub struct Proxy {
    /// `http://127.0.0.1:<port>`.
    pub base_url: String,
    regra: Arc<Mutex<Regra>>,
    liberar: Arc<Semaphore>,
    segurando: Arc<Notify>,
}

impl Proxy {
    /// Starts a proxy to `destino` (`http://host:port`) applying `regra` to each request line
    /// (`GET /v1/car/... HTTP/1.1`).
    pub async fn new_for(
        destino: &str,
        regra: impl Fn(&str) -> Acao + Send + Sync + 'static,
    ) -> Self {
        let destino = destino
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let regra: Arc<Mutex<Regra>> = Arc::new(Mutex::new(Box::new(regra)));
        let liberar = Arc::new(Semaphore::new(0));
        let segurando = Arc::new(Notify::new());
        let (r, l, s) = (regra.clone(), liberar.clone(), segurando.clone());
        tokio::spawn(async move {
            while let Ok((client_addr, _)) = listener.accept().await {
                let (destino, r, l, s) = (destino.clone(), r.clone(), l.clone(), s.clone());
                tokio::spawn(async move {
                    let _ = connection(client_addr, &destino, &r, &l, &s).await;
                });
            }
        });
        Self {
            base_url,
            regra,
            liberar,
            segurando,
        }
    }

    /// Replaces the rule.
    pub fn regra(&self, regra: impl Fn(&str) -> Acao + Send + Sync + 'static) {
        *self.regra.lock().unwrap() = Box::new(regra);
    }

    /// Returns once a request is being held ([`Acao::Segurar`]).
    pub async fn segurando(&self) {
        self.segurando.notified().await;
    }

    /// Lets one held request through.
    pub fn liberar(&self) {
        self.liberar.add_permits(1);
    }
}

async fn connection(
    mut client_addr: TcpStream,
    destino: &str,
    regra: &Mutex<Regra>,
    liberar: &Semaphore,
    segurando: &Notify,
) -> std::io::Result<()> {
    let cabeca = ler_cabeca(&mut client_addr).await?;
    let linha = String::from_utf8_lossy(&cabeca);
    let linha = linha.lines().next().unwrap_or_default().to_owned();
    let acao = (regra.lock().unwrap())(&linha);
    if acao == Acao::Segurar {
        segurando.notify_one();
        liberar.acquire().await.unwrap().forget();
    }
    let mut server = TcpStream::connect(destino).await?;
    server
        .write_all(&uma_requisicao_por_conexao(cabeca))
        .await?;
    if acao == Acao::PerderResposta {
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
fn uma_requisicao_por_conexao(cabeca: Vec<u8>) -> Vec<u8> {
    let Some(fim) = cabeca.windows(2).position(|w| w == b"\r\n") else {
        return cabeca;
    };
    let mut nova = Vec::with_capacity(cabeca.len() + 19);
    nova.extend_from_slice(&cabeca[..fim + 2]);
    nova.extend_from_slice(b"Connection: close\r\n");
    nova.extend_from_slice(&cabeca[fim + 2..]);
    nova
}

/// Reads up to the end of the request head (`\r\n\r\n`); the SDK's GETs have no body.
async fn ler_cabeca(client_addr: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut cabeca = Vec::new();
    let mut buf = [0u8; 4096];
    while !cabeca.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = client_addr.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        cabeca.extend_from_slice(&buf[..n]);
    }
    Ok(cabeca)
}

/// An HTTP client that opens one connection per request (no idle connections kept), for
/// [`carapi_sdk::ClientBuilder::http_client`].
pub fn cliente_sem_reuso() -> carapi_sdk::reqwest::Client {
    carapi_sdk::reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}
