//! What one client can hold of the listener: open connections, the time to send a first request
//! head, and time spent holding a connection open while doing nothing.
//!
//! Invariants: at most `max_connections` connections are open at once, and at most
//! `max_connections_per_client` from one address; a new connection that has not sent a complete
//! request head within `header_read_timeout` is closed; a connection on which nothing was read
//! or written for `idle_timeout` is closed (an event stream is never idle: it sends a keep-alive
//! every 15 s); when the server (or one address) is at its cap, the connection idle the longest
//! is closed to admit the new one, so idle connections cannot lock the server out, and a new
//! connection waits only while every open one is busy.
//!
//! Only a connection's first request head is under `header_read_timeout`: hyper's own
//! per-request head timer is not reachable through `axum::serve`; the idle timeout bounds what a
//! client dribbling later heads on a kept-alive connection can hold.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tracing::debug;

use crate::config::HttpLimits;

/// A connection quiet for less than this is never taken for idle to admit another.
const QUIET_ENOUGH: Duration = Duration::from_millis(500);

/// One open connection, as the listener sees it.
#[derive(Debug)]
struct Tracked {
    peer: IpAddr,
    /// When something was last read or written, in milliseconds since the registry's epoch.
    last_active_ms: AtomicU64,
    /// Cancelled to close the connection.
    close: CancellationToken,
}

/// The open connections.
#[derive(Debug)]
struct Registry {
    epoch: Instant,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn open_from(&self, peer: IpAddr) -> usize {
        self.lock().values().filter(|t| t.peer == peer).count()
    }

    /// Closes the connection (of `peer`, when given) idle the longest, if one has been quiet
    /// long enough; whether one was.
    fn close_idlest(&self, peer: Option<IpAddr>) -> bool {
        let quiet_since = self
            .now_ms()
            .saturating_sub(u64::try_from(QUIET_ENOUGH.as_millis()).unwrap_or(u64::MAX));
        let open = self.lock();
        let idlest = open
            .values()
            .filter(|t| peer.is_none_or(|p| t.peer == p) && !t.close.is_cancelled())
            .filter(|t| t.last_active_ms.load(Ordering::Relaxed) <= quiet_since)
            .min_by_key(|t| t.last_active_ms.load(Ordering::Relaxed));
        match idlest {
            Some(tracked) => {
                debug!(peer = %tracked.peer, "Closing the idlest connection to admit a new one.");
                tracked.close.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Tracked>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The address a request's connection came from, as handlers see it (`ConnectInfo<ClientAddr>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, BoundedListener>>
    for ClientAddr
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, BoundedListener>) -> Self {
        Self(*stream.remote_addr())
    }
}

/// A TCP listener bounded as the module says.
#[derive(Debug)]
pub struct BoundedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    registry: Arc<Registry>,
    limits: HttpLimits,
}

impl BoundedListener {
    /// Bounds `inner` by `limits`.
    pub fn new(inner: TcpListener, limits: HttpLimits) -> Self {
        Self {
            inner,
            permits: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            registry: Arc::new(Registry {
                epoch: Instant::now(),
                next_id: AtomicU64::new(0),
                open: Mutex::default(),
            }),
            limits,
        }
    }

    /// A slot for a connection from `peer`, closing an idle one to make room where needed;
    /// `None` when `peer` holds its whole share and none of it is idle.
    async fn admit(&self, peer: IpAddr) -> Option<OwnedSemaphorePermit> {
        let per_client = self.limits.max_connections_per_client.max(1);
        if self.registry.open_from(peer) >= per_client && !self.registry.close_idlest(Some(peer)) {
            return None;
        }
        if let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() {
            return Some(permit);
        }
        self.registry.close_idlest(None);
        // The semaphore is never closed, so this waits for a slot (one that was just freed, or
        // the next busy connection to end) and never fails.
        Arc::clone(&self.permits).acquire_owned().await.ok()
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = BoundedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (io, addr) = axum::serve::Listener::accept(&mut self.inner).await;
            let Some(permit) = self.admit(addr.ip()).await else {
                debug!(peer = %addr.ip(), "Refused a connection: the client holds its share, all busy.");
                drop(io);
                continue;
            };
            let id = self.registry.next_id.fetch_add(1, Ordering::Relaxed);
            let tracked = Arc::new(Tracked {
                peer: addr.ip(),
                last_active_ms: AtomicU64::new(self.registry.now_ms()),
                close: CancellationToken::new(),
            });
            self.registry.lock().insert(id, Arc::clone(&tracked));
            let io = BoundedIo {
                io,
                _permit: permit,
                id,
                registry: Arc::clone(&self.registry),
                closed: Box::pin(tracked.close.clone().cancelled_owned()),
                tracked,
                head_deadline: Some(Box::pin(tokio::time::sleep(
                    self.limits.header_read_timeout,
                ))),
                idle_timeout: self.limits.idle_timeout,
                idle_deadline: Box::pin(tokio::time::sleep(self.limits.idle_timeout)),
                tail: [0; 3],
            };
            return (io, addr);
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// An accepted connection: holds its slot until dropped; its reads fail once the first request
/// head is overdue, once it has been idle too long, or once the listener closed it.
#[derive(Debug)]
pub struct BoundedIo {
    io: TcpStream,
    _permit: OwnedSemaphorePermit,
    id: u64,
    registry: Arc<Registry>,
    tracked: Arc<Tracked>,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
    /// Armed until the first `\r\n\r\n` (the end of a request head) has been read.
    head_deadline: Option<Pin<Box<Sleep>>>,
    idle_timeout: Duration,
    /// When the connection is idle if nothing happens before; moved on as things happen.
    idle_deadline: Pin<Box<Sleep>>,
    /// The last three bytes read, so a head end split across reads is still seen.
    tail: [u8; 3],
}

impl Drop for BoundedIo {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

impl BoundedIo {
    fn touch(&self) {
        let now = self.registry.now_ms();
        self.tracked.last_active_ms.store(now, Ordering::Relaxed);
    }

    /// Why reads must fail now, if they must.
    fn overdue(&mut self, cx: &mut Context<'_>) -> Option<&'static str> {
        if self.closed.as_mut().poll(cx).is_ready() {
            return Some("closed to admit a new connection (the server was at its cap)");
        }
        if let Some(deadline) = self.head_deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Some("no request head within [server] header_read_timeout_ms");
        }
        while self.idle_deadline.as_mut().poll(cx).is_ready() {
            // Writes move the last activity on without touching the timer: look again.
            let last = Duration::from_millis(self.tracked.last_active_ms.load(Ordering::Relaxed));
            let due = self.registry.epoch + last + self.idle_timeout;
            if due <= Instant::now() {
                return Some("idle for [server] idle_timeout_ms");
            }
            self.idle_deadline.as_mut().reset(due);
        }
        None
    }
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
        if let Some(why) = this.overdue(cx) {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, why)));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.io).poll_read(cx, buf))?;
        let read = buf.filled().get(before..).unwrap_or_default();
        if !read.is_empty() {
            this.touch();
        }
        if this.head_deadline.is_some() && head_ends(&mut this.tail, read) {
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
        let this = self.get_mut();
        let written = ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        if written > 0 {
            this.touch();
        }
        Poll::Ready(Ok(written))
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
        let this = self.get_mut();
        let written = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
        if written > 0 {
            this.touch();
        }
        Poll::Ready(Ok(written))
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
