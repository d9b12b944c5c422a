//! What the long connection hands each callback to.

use serde_json::Value;
use workmate_adapter::BoxFuture;

/// Where the long connection delivers WeCom's callbacks.
pub trait FrameHandler: Send + Sync + std::fmt::Debug {
    /// Handles one callback. `cmd` is [`MSG_CALLBACK`](super::MSG_CALLBACK) or
    /// [`EVENT_CALLBACK`](super::EVENT_CALLBACK); `req_id` is the frame's, to answer it with
    /// [`Sender::respond`](super::Sender::respond); `body` is the callback's JSON, the same as
    /// the HTTP callback's once decrypted.
    ///
    /// Each call runs on its own task, so a slow turn never holds up reading: at most
    /// [`MAX_IN_FLIGHT`](super::MAX_IN_FLIGHT) run at once and up to
    /// [`MAX_WAITING`](super::MAX_WAITING) more wait for a slot; a callback beyond that is
    /// dropped with an error log (the reader never stops, since acks and pings travel on the
    /// same socket). On stop, running calls get [`Timings::drain`](super::Timings::drain) and
    /// are then cut. `disconnected_event` is not handed over: the connection reports it.
    fn handle(&self, cmd: &str, req_id: &str, body: Value) -> BoxFuture<'_, ()>;
}
