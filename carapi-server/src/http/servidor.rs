//! The accept loop: HTTP/1.1 over hyper with the edge's time-outs and a bound on open
//! connections ([`super::borda::Borda`]).
//!
//! - Each connection holds a permit of a semaphore of [`Borda::conexoes_maximas`]; with none
//!   left the loop stops accepting (new clients wait in the kernel's backlog) instead of
//!   running out of file descriptors.
//! - hyper closes a connection that has not sent a request's headers within
//!   [`Borda::tempo_cabecalho`], counted from when it starts waiting: a silent or idle
//!   keep-alive connection frees its permit after that time.
//! - A failed `accept` (e.g. `EMFILE`) is logged and retried after a short pause, never in a
//!   busy loop.
//! - On cancellation the loop stops accepting and waits (at most [`ESPERA_ENCERRAMENTO`]) for
//!   in-flight requests.
//!
//! - Every request carries its connection's [`Conexao`], with which the test mode
//!   ([`crate::modo_teste`]) can reset the connection instead of answering.
//!
//! Only HTTP/1.1: every client of the contract speaks it, and hyper's automatic HTTP/2
//! detection would wait for a silent client's first bytes without a time-out.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::borda::Borda;

/// Longest wait for in-flight requests on shutdown.
pub const ESPERA_ENCERRAMENTO: Duration = Duration::from_secs(10);

/// Pause after a failed `accept`.
const PAUSA_ACCEPT: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `parar` is cancelled.
pub async fn servir(listener: TcpListener, app: Router, borda: Borda, parar: CancellationToken) {
    let permissoes = Arc::new(Semaphore::new(borda.conexoes_maximas.max(1)));
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
        let _ = tcp.set_nodelay(true);
        let corte = CancellationToken::new();
        // The client address goes into each request (the per-address limit of
        // unauthenticated requests reads it), and the connection's handle.
        let alca = Conexao(corte.clone());
        let servico = app.clone().map_request(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(endereco));
            req.extensions_mut().insert(alca.clone());
            req
        });
        let socket = SocketCortavel {
            tcp,
            corte: corte.clone(),
        };
        let conexao = h1.serve_connection(TokioIo::new(socket), TowerToHyperService::new(servico));
        let conexao = graceful.watch(conexao);
        tokio::spawn(async move {
            tokio::select! {
                r = conexao => if let Err(e) = r {
                    tracing::debug!(erro = %e, %endereco, "conexão encerrada com erro");
                },
                () = corte.cancelled() => tracing::debug!(%endereco, "conexão cortada"),
            }
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

/// The connection a request arrived on (a request extension). [`Conexao::resetar`] drops it
/// with a TCP reset, without answering: the test mode's way to lose an answer on the wire.
#[derive(Debug, Clone)]
pub struct Conexao(CancellationToken);

impl Conexao {
    /// Closes the connection at once with a reset (`SO_LINGER` 0): whatever was not yet
    /// written is lost and the client sees "connection reset".
    pub fn resetar(&self) {
        self.0.cancel();
    }
}

/// The TCP stream of a connection; when dropped after [`Conexao::resetar`] it closes with a
/// reset instead of an orderly FIN.
struct SocketCortavel {
    tcp: TcpStream,
    corte: CancellationToken,
}

impl Drop for SocketCortavel {
    fn drop(&mut self) {
        if self.corte.is_cancelled() {
            let _ = self.tcp.set_zero_linger();
        }
    }
}

impl AsyncRead for SocketCortavel {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for SocketCortavel {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}
