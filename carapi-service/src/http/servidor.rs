//! The accept loop: HTTP/1.1 over hyper with the edge's time-outs and a bound on open
//! connections ([`super::borda::Borda`]).
//!
//! - Each connection holds a permit of a semaphore of [`Borda::conexoes_maximas`]; with none
//!   left the loop stops accepting (new clients wait in the kernel's backlog) instead of
//!   running out of file descriptors.
//! - hyper closes a connection that has not sent a request's headers within
//!   [`Borda::tempo_cabecalho`], counted from when it starts waiting: a silent or idle
//!   keep-alive connection frees its permit after that time.
//! - A peer that accepts no bytes of an answer for [`Borda::tempo_envio`] has its connection
//!   closed (`http/envio.rs`): a client that pipelines requests and never
//!   reads cannot hold a permit.
//! - One connection serves at most [`Borda::pedidos_por_conexao`] requests: the last answer
//!   says `Connection: close` and hyper closes the connection after it (nginx's
//!   `keepalive_requests`), so requests pipelined past the bound are never served.
//! - A failed `accept` (e.g. `EMFILE`) is logged and retried after a short pause, never in a
//!   busy loop.
//! - On cancellation the loop stops accepting and waits (at most [`ESPERA_ENCERRAMENTO`]) for
//!   in-flight requests.
//!
//! - One client address holds at most [`Borda::conexoes_por_endereco`] of them (nginx's
//!   `limit_conn`): past it that address's new connections are closed at once (with a reset,
//!   so they hold no permit and leave no `TIME_WAIT`), and one host that opens thousands of idle
//!   sockets cannot take the permits every other client needs.
//! - What happens to each accepted socket before it is served is a [`Conexoes`]: nothing for
//!   a normal server ([`Diretas`]); the place that assembles a server may wrap it (a test
//!   double that resets connections on demand does).
//!
//! Only HTTP/1.1: every client of the contract speaks it, and hyper's automatic HTTP/2
//! detection would wait for a silent client's first bytes without a time-out.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, Request, header};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::borda::Borda;
use super::envio::EnvioComPrazo;

/// Longest wait for in-flight requests on shutdown.
pub const ESPERA_ENCERRAMENTO: Duration = Duration::from_secs(10);

/// Pause after a failed `accept`.
const PAUSA_ACCEPT: Duration = Duration::from_millis(100);

/// What the accept loop does with each socket it accepts, before serving it.
pub trait Conexoes: Send + Sync + 'static {
    /// The stream served.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// A handle of the connection, given to each of its requests by [`Conexoes::marcar`].
    type Alca: Clone + Send + Sync + 'static;
    /// Wraps an accepted socket.
    fn abrir(&self, tcp: TcpStream) -> (Self::Io, Self::Alca);
    /// Marks a request of the connection `alca` (e.g. puts `alca` in its extensions).
    fn marcar(alca: &Self::Alca, req: &mut Request<Incoming>);
    /// Resolves when the connection must be dropped at once, whatever it is doing.
    fn cortada(alca: &Self::Alca) -> impl Future<Output = ()> + Send + 'static;
}

/// Sockets served as accepted (a normal server).
#[derive(Debug, Clone, Copy, Default)]
pub struct Diretas;

impl Conexoes for Diretas {
    type Io = TcpStream;
    type Alca = ();

    fn abrir(&self, tcp: TcpStream) -> (TcpStream, ()) {
        (tcp, ())
    }

    fn marcar((): &(), _: &mut Request<Incoming>) {}

    fn cortada((): &()) -> impl Future<Output = ()> + Send + 'static {
        std::future::pending()
    }
}

/// Open connections per client address, bounded ([`Borda::conexoes_por_endereco`]); IPv6
/// addresses count per /64 ([`crate::limits::chave_endereco`]).
#[derive(Debug)]
struct PorEndereco {
    limite: Option<usize>,
    abertas: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted in [`PorEndereco`]; the count goes down when it is dropped.
struct Vaga {
    contagem: Arc<PorEndereco>,
    ip: IpAddr,
}

impl PorEndereco {
    /// A place for one more connection from `ip`, or `None` when it has its bound already.
    fn tomar(contagem: &Arc<Self>, ip: IpAddr) -> Option<Vaga> {
        let limite = contagem.limite?;
        let ip = crate::limits::chave_endereco(ip);
        let mut abertas = contagem.abertas.lock().unwrap_or_else(|e| e.into_inner());
        let n = abertas.entry(ip).or_insert(0);
        if *n >= limite {
            return None;
        }
        *n += 1;
        Some(Vaga {
            contagem: contagem.clone(),
            ip,
        })
    }
}

impl Drop for Vaga {
    fn drop(&mut self) {
        let mut abertas = self
            .contagem
            .abertas
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(n) = abertas.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                abertas.remove(&self.ip);
            }
        }
    }
}

/// Serves `app` on `listener` until `parar` is cancelled, each socket as accepted.
pub async fn servir(listener: TcpListener, app: Router, borda: Borda, parar: CancellationToken) {
    servir_com(listener, app, borda, parar, Diretas).await;
}

/// [`servir`] with `conexoes` deciding what is done to each accepted socket.
pub async fn servir_com<C: Conexoes>(
    listener: TcpListener,
    app: Router,
    borda: Borda,
    parar: CancellationToken,
    conexoes: C,
) {
    let permissoes = Arc::new(Semaphore::new(borda.conexoes_maximas.max(1)));
    let por_endereco = Arc::new(PorEndereco {
        limite: borda.conexoes_por_endereco,
        abertas: Mutex::default(),
    });
    let mut h1 = http1::Builder::new();
    h1.timer(TokioTimer::new())
        .header_read_timeout(borda.tempo_cabecalho)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let permissao = tokio::select! {
            p = permissoes.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = parar.cancelled() => break,
        };
        let (tcp, endereco) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(erro = %e, "accept falhou; nova tentativa em breve");
                    tokio::time::sleep(PAUSA_ACCEPT).await;
                    continue;
                }
            },
            () = parar.cancelled() => break,
        };
        let vaga = match borda.conexoes_por_endereco {
            None => None,
            Some(_) => match PorEndereco::tomar(&por_endereco, endereco.ip()) {
                Some(v) => Some(v),
                None => {
                    tracing::debug!(%endereco, "conexões demais deste endereço; fechada");
                    let _ = tcp.set_zero_linger();
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        let (io, alca) = conexoes.abrir(tcp);
        let corte = C::cortada(&alca);
        // The client address goes into each request (the per-address limit of
        // unauthenticated requests reads it).
        let servidos = Arc::new(AtomicU32::new(0));
        let maximo = borda.pedidos_por_conexao.max(1);
        let servico = app
            .clone()
            .map_request(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(endereco));
                C::marcar(&alca, &mut req);
                req
            })
            .map_response(move |mut resp: axum::response::Response| {
                if servidos.fetch_add(1, Ordering::Relaxed) + 1 >= maximo {
                    resp.headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                resp
            });
        let io = EnvioComPrazo::new(io, borda.tempo_envio);
        let conexao = h1.serve_connection(TokioIo::new(io), TowerToHyperService::new(servico));
        let conexao = graceful.watch(conexao);
        tokio::spawn(async move {
            tokio::select! {
                r = conexao => if let Err(e) = r {
                    tracing::debug!(erro = %e, %endereco, "conexão encerrada com erro");
                },
                () = corte => tracing::debug!(%endereco, "conexão cortada"),
            }
            drop(vaga);
            drop(permissao);
        });
    }
    drop(listener);
    if tokio::time::timeout(ESPERA_ENCERRAMENTO, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requisições ainda em curso após a espera de encerramento");
    }
}
