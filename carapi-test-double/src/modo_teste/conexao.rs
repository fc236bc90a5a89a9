//! The test mode's sockets: each request carries its connection's [`Conexao`], with which a
//! fault ([`super::Falha::ResetarConexao`], [`super::Falha::PerderRespostaAposCobrar`],
//! [`super::Falha::CortarCorpo`]) resets the connection instead of answering. Only a
//! test-mode server wraps its sockets so ([`Cortaveis`]); a normal one serves them as
//! accepted.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::http::Request;
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use carapi_service::http::servidor::Conexoes;

/// Sockets that a fault can reset ([`Conexao::resetar`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Cortaveis;

impl Conexoes for Cortaveis {
    type Io = SocketCortavel;
    type Alca = Conexao;

    fn abrir(&self, tcp: TcpStream) -> (SocketCortavel, Conexao) {
        let corte = CancellationToken::new();
        (
            SocketCortavel {
                tcp,
                corte: corte.clone(),
            },
            Conexao(corte),
        )
    }

    fn marcar(alca: &Conexao, req: &mut Request<Incoming>) {
        req.extensions_mut().insert(alca.clone());
    }

    fn cortada(alca: &Conexao) -> impl Future<Output = ()> + Send + 'static {
        alca.0.clone().cancelled_owned()
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
#[derive(Debug)]
pub struct SocketCortavel {
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
