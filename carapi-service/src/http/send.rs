//! The send time-out of a connection ([`super::edge::Edge::send_timeout`]).
//!
//! hyper bounds how long a client may take to send a request's headers, but not how long it
//! may take to *read* an answer: a client that pipelines requests and never reads fills the
//! socket's send buffer, hyper's write waits forever, and the connection (with its permit of
//! the connection bound) is held. [`SendDeadline`] wraps the socket so that a write (or
//! flush, or shutdown) that makes no progress for the time-out fails with
//! [`std::io::ErrorKind::TimedOut`]; hyper then drops the connection. The clock restarts at
//! every write that moves bytes, so a slow reader that keeps reading is never cut.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// A stream whose writes fail when the peer accepts no bytes for [`SendDeadline::new`]'s
/// `prazo`.
#[derive(Debug)]
pub(crate) struct SendDeadline<T> {
    io: T,
    deadline: Duration,
    wait: Option<Pin<Box<Sleep>>>,
}

impl<T> SendDeadline<T> {
    /// `io` with a send time-out of `prazo`.
    pub(crate) fn new(io: T, deadline: Duration) -> Self {
        SendDeadline {
            io,
            deadline,
            wait: None,
        }
    }

    /// What to answer when the inner write is pending: pending, or the time-out's error once
    /// `prazo` has passed since the first pending write without progress.
    fn pending<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let deadline = self.deadline;
        let wait = self
            .wait
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(deadline)));
        match wait.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "o cliente não aceitou bytes da resposta dentro do prazo de envio",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn after_poll<R>(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match r {
            Poll::Ready(r) => {
                self.wait = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.pending(cx),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.after_poll(cx, r)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.after_poll(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        self.after_poll(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_shutdown(cx);
        self.after_poll(cx, r)
    }
}
