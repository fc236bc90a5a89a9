//! The accept loop: HTTP/1.1 over hyper with the edge's time-outs and a bound on open
//! connections ([`super::edge::Edge`]).
//!
//! - Each connection holds a permit of a semaphore of [`Edge::max_connections`]; with none
//!   left the loop stops accepting (new clients wait in the kernel's backlog) instead of
//!   running out of file descriptors.
//! - hyper closes a connection that has not sent a request's headers within
//!   [`Edge::header_timeout`], counted from when it starts waiting: a silent or idle
//!   keep-alive connection frees its permit after that time.
//! - A peer that accepts no bytes of an answer for [`Edge::send_timeout`] has its connection
//!   closed (`http/send.rs`): a client that pipelines requests and never
//!   reads cannot hold a permit.
//! - One connection serves at most [`Edge::requests_per_connection`] requests: the last answer
//!   says `Connection: close` and hyper closes the connection after it (nginx's
//!   `keepalive_requests`), so requests pipelined past the bound are never served.
//! - A failed `accept` (e.g. `EMFILE`) is logged and retried after a short pause, never in a
//!   busy loop.
//! - On cancellation the loop stops accepting and waits (at most `SHUTDOWN_WAIT`) for
//!   in-flight requests.
//!
//! - One client address holds at most [`Edge::connections_per_address`] of them (nginx's
//!   `limit_conn`): past it that address's new connections are closed at once (with a reset,
//!   so they hold no permit and leave no `TIME_WAIT`), and one host that opens thousands of idle
//!   sockets cannot take the permits every other client needs.
//! - What happens to each accepted socket before it is served is a [`Connections`]: nothing for
//!   a normal server (`Plain`); the place that assembles a server may wrap it (a test
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

use super::edge::Edge;
use super::send::SendDeadline;

/// Longest wait for in-flight requests on shutdown.
pub(crate) const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// Pause after a failed `accept`.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// What the accept loop does with each socket it accepts, before serving it.
pub trait Connections: Send + Sync + 'static {
    /// The stream served.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// A handle of the connection, given to each of its requests by `Connections::marcar`.
    type Handle: Clone + Send + Sync + 'static;
    /// Wraps an accepted socket.
    fn open(&self, tcp: TcpStream) -> (Self::Io, Self::Handle);
    /// Marks a request of the connection `alca` (e.g. puts `alca` in its extensions).
    fn tag(alca: &Self::Handle, req: &mut Request<Incoming>);
    /// Resolves when the connection must be dropped at once, whatever it is doing.
    fn was_reset(alca: &Self::Handle) -> impl Future<Output = ()> + Send + 'static;
}

/// Sockets served as accepted (a normal server).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Plain;

impl Connections for Plain {
    type Io = TcpStream;
    type Handle = ();

    fn open(&self, tcp: TcpStream) -> (TcpStream, ()) {
        (tcp, ())
    }

    fn tag((): &(), _: &mut Request<Incoming>) {}

    fn was_reset((): &()) -> impl Future<Output = ()> + Send + 'static {
        std::future::pending()
    }
}

/// Open connections per client address, bounded ([`Edge::connections_per_address`]); IPv6
/// addresses count per /64 ([`crate::rate_limit::address_key`]).
#[derive(Debug)]
struct PerAddress {
    limite: Option<usize>,
    abertas: Mutex<HashMap<IpAddr, usize>>,
}

/// One connection counted in [`PerAddress`]; the count goes down when it is dropped.
struct Slot {
    counters: Arc<PerAddress>,
    ip: IpAddr,
}

impl PerAddress {
    /// A place for one more connection from `ip`, or `None` when it has its bound already.
    fn take(counters: &Arc<Self>, ip: IpAddr) -> Option<Slot> {
        let limite = counters.limite?;
        let ip = crate::rate_limit::address_key(ip);
        let mut abertas = counters.abertas.lock().unwrap_or_else(|e| e.into_inner());
        let n = abertas.entry(ip).or_insert(0);
        if *n >= limite {
            return None;
        }
        *n += 1;
        Some(Slot {
            counters: counters.clone(),
            ip,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut abertas = self
            .counters
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

/// The per-address slot of a connection from `ip`: `Ok(None)` when there is no bound or `ip`
/// is a trusted proxy (its socket carries many clients: it counts toward no per-address
/// bound), `Err` when `ip` is at its bound.
fn slot(por_endereco: &Arc<PerAddress>, edge: &Edge, ip: IpAddr) -> Result<Option<Slot>, ()> {
    if edge.connections_per_address.is_none()
        || super::client_addr::is_trusted(ip, &edge.trusted_proxies)
    {
        return Ok(None);
    }
    PerAddress::take(por_endereco, ip).map(Some).ok_or(())
}

/// [`servir`] with `conexoes` deciding what is done to each accepted socket.
pub(crate) async fn serve_with<C: Connections>(
    listener: TcpListener,
    app: Router,
    edge: Edge,
    parar: CancellationToken,
    conexoes: C,
) {
    let permissoes = Arc::new(Semaphore::new(edge.max_connections.max(1)));
    let por_endereco = Arc::new(PerAddress {
        limite: edge.connections_per_address,
        abertas: Mutex::default(),
    });
    let mut h1 = http1::Builder::new();
    h1.timer(TokioTimer::new())
        .header_read_timeout(edge.header_timeout)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let permissao = tokio::select! {
            p = permissoes.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = parar.cancelled() => break,
        };
        let (tcp, address) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(erro = %e, "accept falhou; nova tentativa em breve");
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            () = parar.cancelled() => break,
        };
        let Ok(vaga) = slot(&por_endereco, &edge, address.ip()) else {
            tracing::debug!(%address, "conexões demais deste endereço; fechada");
            let _ = tcp.set_zero_linger();
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let (io, alca) = conexoes.open(tcp);
        let corte = C::was_reset(&alca);
        // The client address goes into each request (the per-address limit of
        // unauthenticated requests reads it).
        let servidos = Arc::new(AtomicU32::new(0));
        let maximo = edge.requests_per_connection.max(1);
        let service = app
            .clone()
            .map_request(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(address));
                C::tag(&alca, &mut req);
                req
            })
            .map_response(move |mut resp: axum::response::Response| {
                if servidos.fetch_add(1, Ordering::Relaxed) + 1 >= maximo {
                    resp.headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                resp
            });
        let io = SendDeadline::new(io, edge.send_timeout);
        let connection = h1.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            tokio::select! {
                r = connection => if let Err(e) = r {
                    tracing::debug!(erro = %e, %address, "conexão encerrada com erro");
                },
                () = corte => tracing::debug!(%address, "conexão cortada"),
            }
            drop(vaga);
            drop(permissao);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_WAIT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requisições ainda em curso após a espera de encerramento");
    }
}
