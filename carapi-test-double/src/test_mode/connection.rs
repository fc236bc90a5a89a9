//! The test mode's sockets: each request carries its connection's [`ConnectionHandle`], with which a
//! fault ([`super::Fault::ResetConnection`], [`super::Fault::LoseReplyAfterCharge`],
//! [`super::Fault::CutBody`]) resets the connection instead of answering. Only a
//! test-mode server wraps its sockets so ([`Resettable`]); a normal one serves them as
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

use carapi_service::http::server::Connections;

/// Sockets that a fault can reset ([`ConnectionHandle::reset_db`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Resettable;

impl Connections for Resettable {
    type Io = ResettableSocket;
    type Handle = ConnectionHandle;

    fn open(&self, tcp: TcpStream) -> (ResettableSocket, ConnectionHandle) {
        let cut = CancellationToken::new();
        (
            ResettableSocket {
                tcp,
                cut: cut.clone(),
            },
            ConnectionHandle(cut),
        )
    }

    fn tag(handle: &ConnectionHandle, req: &mut Request<Incoming>) {
        req.extensions_mut().insert(handle.clone());
    }

    fn was_reset(handle: &ConnectionHandle) -> impl Future<Output = ()> + Send + 'static {
        handle.0.clone().cancelled_owned()
    }
}

/// The connection a request arrived on (a request extension). [`ConnectionHandle::reset_db`] drops it
/// with a TCP reset, without answering: the test mode's way to lose an answer on the wire.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionHandle(CancellationToken);

impl ConnectionHandle {
    /// Closes the connection at once with a reset (`SO_LINGER` 0): whatever was not yet
    /// written is lost and the client sees "connection reset".
    pub(crate) fn reset_db(&self) {
        self.0.cancel();
    }
}

/// The TCP stream of a connection; when dropped after [`ConnectionHandle::reset_db`] it closes with a
/// reset instead of an orderly FIN.
#[derive(Debug)]
pub(crate) struct ResettableSocket {
    tcp: TcpStream,
    cut: CancellationToken,
}

impl Drop for ResettableSocket {
    fn drop(&mut self) {
        if self.cut.is_cancelled() {
            let _ = self.tcp.set_zero_linger();
        }
    }
}

impl AsyncRead for ResettableSocket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableSocket {
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
