//! Bounds on what one client can hold of the server: open connections, the time to send a
//! request head, the time until a response starts, and the size of a body.
//!
//! Invariants: at most `max_connections` connections are open at once (more wait in the kernel's
//! backlog until one closes); a new connection that has not sent a complete request head within
//! `header_read_timeout` is closed; a request whose response has not started within
//! `request_timeout` gets `408`, which covers a slowly sent body because handlers read bodies
//! before answering; a streamed response body (the SSE event streams) is never cut, since the
//! deadline ends when the response head is ready; a body over `max_body_bytes` gets `413`.
//!
//! Only a connection's first request head is under `header_read_timeout`: hyper's own per-request
//! head timer is not reachable through `axum::serve`, and the connection cap bounds what a client
//! dribbling later heads on a kept-alive connection can hold.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

use super::ApiError;
use crate::config::HttpLimits;

/// The request bounds (timeout and body size) around every route of `router`.
pub(crate) fn bound_requests(router: Router, limits: HttpLimits) -> Router {
    router
        .layer(middleware::from_fn_with_state(limits, bound_request))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
}

async fn bound_request(State(limits): State<HttpLimits>, request: Request, next: Next) -> Response {
    // A declared length over the limit is refused before anything is read; a chunked body is cut
    // by the extractors at the same limit (their own 413).
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return ApiError::TooLarge {
            limit: limits.max_body_bytes,
        }
        .into_response();
    }
    match tokio::time::timeout(limits.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::TimedOut {
            ms: limits.request_timeout.as_millis(),
        }
        .into_response(),
    }
}

/// A TCP listener that holds at most `max_connections` connections open and closes those that
/// are too slow to send their first request head.
#[derive(Debug)]
pub struct BoundedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    header_read_timeout: Duration,
}

impl BoundedListener {
    /// Bounds `inner` by `limits`.
    pub fn new(inner: TcpListener, limits: HttpLimits) -> Self {
        Self {
            inner,
            permits: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            header_read_timeout: limits.header_read_timeout,
        }
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = BoundedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // The semaphore is never closed, so this waits for a free slot and never fails.
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok();
        let (io, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        let io = BoundedIo {
            io,
            _permit: permit,
            head_deadline: Some(Box::pin(tokio::time::sleep(self.header_read_timeout))),
            tail: [0; 3],
        };
        (io, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// An accepted connection: holds its slot until dropped, and fails reads once the first request
/// head is overdue.
#[derive(Debug)]
pub struct BoundedIo {
    io: TcpStream,
    _permit: Option<OwnedSemaphorePermit>,
    /// Armed until the first `\r\n\r\n` (the end of a request head) has been read.
    head_deadline: Option<Pin<Box<Sleep>>>,
    /// The last three bytes read, so a head end split across reads is still seen.
    tail: [u8; 3],
}

/// Whether `bytes`, read after the three in `tail`, complete a request head (`\r\n\r\n`);
/// `tail` becomes the last three bytes seen.
fn head_ends(tail: &mut [u8; 3], bytes: &[u8]) -> bool {
    let mut window = tail.to_vec();
    window.extend_from_slice(bytes);
    if window.windows(4).any(|w| w == b"\r\n\r\n") {
        return true;
    }
    for (slot, byte) in tail.iter_mut().zip(window.iter().skip(window.len() - 3)) {
        *slot = *byte;
    }
    false
}

impl AsyncRead for BoundedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(deadline) = this.head_deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no request head within [server] header_read_timeout_ms",
            )));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        if this.head_deadline.is_some()
            && head_ends(
                &mut this.tail,
                buf.filled().get(before..).unwrap_or_default(),
            )
        {
            this.head_deadline = None;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for BoundedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_end_split_across_reads_is_seen() {
        let mut tail = [0u8; 3];
        assert!(!head_ends(&mut tail, b"GET / HTTP/1.1\r\nHost: x\r"));
        assert!(!head_ends(&mut tail, b"\n"));
        assert!(!head_ends(&mut tail, b"\r"));
        assert!(head_ends(&mut tail, b"\nbody"));
        let mut tail = [0u8; 3];
        assert!(!head_ends(&mut tail, b"GET / HTTP/1.1\r\nHost: x\r\n"));
        assert!(!head_ends(&mut tail, b""));
        assert!(head_ends(&mut tail, b"\r\n"));
    }
}
