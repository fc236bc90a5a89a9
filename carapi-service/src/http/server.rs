//! The accept loop: HTTP/1.1 over hyper with the edge's time-outs and a bound on open
//! connections ([`super::edge::Edge`]).
//!
//! - Each connection holds a permit of a semaphore of [`Edge::max_connections`]; with none
//!   left the loop stops accepting (new clients wait in the kernel's backlog) instead of
//!   running out of file descriptors.
//! - hyper closes a connection that has not sent a request's headers within
//!   [`Edge::header_timeout`], counted from when it starts waiting: a silent or idle
//!   keep-alive connection frees its permit after that time. A connection accepted while over
//!   half of [`Edge::max_connections`] are open gets a quarter of it, at least 1 s
//!   (`header_timeout_for`): under pressure, sockets that send headers slowly free their
//!   permits four times sooner.
//! - A peer that accepts no bytes of an answer for [`Edge::send_timeout`] has its connection
//!   closed (`http/send.rs`): a client that pipelines requests and never
//!   reads cannot hold a permit.
//! - One connection serves at most [`Edge::requests_per_connection`] requests: the last answer
//!   says `Connection: close` and hyper closes the connection after it (nginx's
//!   `keepalive_requests`), so requests pipelined past the bound are never served.
//! - A connection buffers at most [`Edge::max_header_bytes`] of a request's head: past it hyper
//!   answers 431 and closes it, so unfinished headers cannot hold more memory than that each.
//! - A failed `accept` (e.g. `EMFILE`) is logged and retried after a short pause, never in a
//!   busy loop.
//! - On cancellation the loop stops accepting and waits (at most `SHUTDOWN_WAIT`) for
//!   in-flight requests.
//!
//! - One client address holds at most [`Edge::connections_per_address`] of them (nginx's
//!   `limit_conn`): past it that address's new connections are closed at once (with a reset,
//!   so they hold no permit and leave no `TIME_WAIT`), and one host that opens thousands of idle
//!   sockets cannot take the permits every other client needs.
//! - While over half of [`Edge::max_connections`] are open, one client address has at most
//!   [`Edge::unfinished_per_address`] connections whose first request's head has not fully
//!   arrived (never counting a trusted proxy's address): past it that address's new
//!   connections are closed at once, so addresses that send headers slowly cannot hold every
//!   permit.
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

/// hyper's smallest read buffer (it refuses a smaller `max_buf_size`).
const MIN_HEADER_BYTES: usize = 8 * 1024;

/// Pause after a failed `accept`.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// What the accept loop does with each socket it accepts, before serving it.
pub trait Connections: Send + Sync + 'static {
    /// The stream served.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// A handle of the connection, given to each of its requests by `Connections::tag`.
    type Handle: Clone + Send + Sync + 'static;
    /// Wraps an accepted socket.
    fn open(&self, tcp: TcpStream) -> (Self::Io, Self::Handle);
    /// Marks a request of the connection `alca` (e.g. puts `alca` in its extensions).
    fn tag(handle: &Self::Handle, req: &mut Request<Incoming>);
    /// Resolves when the connection must be dropped at once, whatever it is doing.
    fn was_reset(handle: &Self::Handle) -> impl Future<Output = ()> + Send + 'static;
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
    open: Mutex<HashMap<IpAddr, usize>>,
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
        let mut open = counters.open.lock().unwrap_or_else(|e| e.into_inner());
        let n = open.entry(ip).or_insert(0);
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
        let mut open = self.counters.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// An admitted connection's place in its address's count (if counted) and in
/// `carapi_connections_open`; both are given back when it is dropped.
type Counted = (Option<Slot>, crate::metrics::OpenConnection);

/// True while over half of `maximo` connections are open (`livres` permits left): the
/// pressure under which a new connection gets the shorter header time-out and counts toward
/// its address's bound of unfinished requests.
fn under_pressure(free: usize, maximo: usize) -> bool {
    free < maximo.max(1) / 2
}

/// The header time-out of a connection accepted when `pressao` says whether the server is under
/// pressure ([`under_pressure`]): [`Edge::header_timeout`], or under pressure a quarter of it
/// but at least 1 s (never more than the normal one).
pub(crate) fn header_timeout_for(normal: Duration, pressure: bool) -> Duration {
    if pressure {
        (normal / 4).max(Duration::from_secs(1)).min(normal)
    } else {
        normal
    }
}

/// The places of a new connection from `address` in the per-address counts
/// ([`Edge::connections_per_address`], and under pressure [`Edge::unfinished_per_address`]),
/// or `None` when the address is past one of its bounds (the connection is closed at once);
/// `pressao` is [`under_pressure`] as the connection was accepted.
fn admit(
    per_address: &Arc<PerAddress>,
    pending: &Arc<PerAddress>,
    pressure: bool,
    edge: &Edge,
    address: std::net::SocketAddr,
) -> Option<(Counted, Option<Slot>)> {
    // A trusted proxy's socket carries many clients: it counts toward no per-address bound.
    let trusted = super::client_addr::is_trusted(address.ip(), &edge.trusted_proxies);
    let slot = match edge.connections_per_address {
        Some(_) if !trusted => {
            let Some(v) = PerAddress::take(per_address, address.ip()) else {
                tracing::debug!(%address, "conexões demais deste endereço; fechada");
                crate::metrics::connection_refused("conexoes_por_endereco");
                return None;
            };
            Some(v)
        }
        _ => None,
    };
    // Under pressure (over half the connections open), until its first request's head
    // arrives, a connection counts toward its address's bound of unfinished requests (never a
    // trusted proxy's: it carries many clients); a burst of new connections from one address
    // is not refused while connections are plentiful.
    let slot = (slot, crate::metrics::OpenConnection::new());
    if !pressure || edge.unfinished_per_address.is_none() || trusted {
        return Some((slot, None));
    }
    let Some(p) = PerAddress::take(pending, address.ip()) else {
        tracing::debug!(%address, "pedidos inacabados demais deste endereço; fechada");
        crate::metrics::connection_refused("pendentes_por_endereco");
        return None;
    };
    Some((slot, Some(p)))
}

/// hyper's HTTP/1 settings of a connection accepted under `pressao` or not: the header
/// time-out of [`header_timeout_for`], the head bound, keep-alive.
fn builder(edge: &Edge, pressure: bool) -> http1::Builder {
    let mut h1 = http1::Builder::new();
    h1.timer(TokioTimer::new())
        .header_read_timeout(header_timeout_for(edge.header_timeout, pressure))
        .max_buf_size(edge.max_header_bytes.max(MIN_HEADER_BYTES))
        .keep_alive(true);
    h1
}

/// [`servir`] with `conexoes` deciding what is done to each accepted socket.
pub(crate) async fn serve_with<C: Connections>(
    listener: TcpListener,
    app: Router,
    edge: Edge,
    stop: CancellationToken,
    connections: C,
) {
    let permissions = Arc::new(Semaphore::new(edge.max_connections.max(1)));
    let per_address = Arc::new(PerAddress {
        limite: edge.connections_per_address,
        open: Mutex::default(),
    });
    let pending = Arc::new(PerAddress {
        limite: edge.unfinished_per_address,
        open: Mutex::default(),
    });
    let h1 = builder(&edge, false);
    let h1_pressure = builder(&edge, true);
    let graceful = GracefulShutdown::new();
    loop {
        let permission = tokio::select! {
            p = permissions.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = stop.cancelled() => break,
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
            () = stop.cancelled() => break,
        };
        let pressure = under_pressure(permissions.available_permits(), edge.max_connections);
        let Some((slot, pendente)) = admit(&per_address, &pending, pressure, &edge, address) else {
            let _ = tcp.set_zero_linger();
            continue;
        };
        let h1 = if pressure { &h1_pressure } else { &h1 };
        let pendente = Arc::new(Mutex::new(pendente));
        let _ = tcp.set_nodelay(true);
        let (io, handle) = connections.open(tcp);
        let cut = C::was_reset(&handle);
        // The client address goes into each request (the per-address limit of
        // unauthenticated requests reads it).
        let served = Arc::new(AtomicU32::new(0));
        let maximo = edge.requests_per_connection.max(1);
        let service = app
            .clone()
            .map_request(move |mut req: Request<Incoming>| {
                // The head arrived: the connection no longer counts as unfinished.
                drop(pendente.lock().unwrap_or_else(|e| e.into_inner()).take());
                req.extensions_mut().insert(ConnectInfo(address));
                C::tag(&handle, &mut req);
                req
            })
            .map_response(move |mut resp: axum::response::Response| {
                if served.fetch_add(1, Ordering::Relaxed) + 1 >= maximo {
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
                () = cut => tracing::debug!(%address, "conexão cortada"),
            }
            drop(slot);
            drop(permission);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_pressure_the_header_time_out_is_a_quarter_and_at_least_a_second() {
        let s = Duration::from_secs;
        assert_eq!(header_timeout_for(s(10), false), s(10));
        assert_eq!(
            header_timeout_for(s(10), true),
            Duration::from_millis(2_500)
        );
        assert_eq!(header_timeout_for(s(2), true), s(1));
        assert_eq!(
            header_timeout_for(Duration::from_millis(500), true),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn pressure_is_over_half_the_connections_open() {
        assert!(!under_pressure(10, 20));
        assert!(under_pressure(9, 20));
        assert!(!under_pressure(1, 1));
        assert!(!under_pressure(0, 0));
    }
}
