//! The long connection ("use a long connection to receive events/callbacks"): Feishu pushes
//! events and card callbacks over a WebSocket the app opens with its App ID and App Secret,
//! so no public URL, signature or decryption is involved. The connection runs on the kit's
//! supervisor ([`workmate_adapter::ws`]); this module is Feishu's part of it.
//!
//! The module moves frames and payload bytes; it knows no tenant, session or chat layer.
//! - [`endpoint`]: `POST /callback/ws/endpoint` gives the `wss://` URL and the server's timing
//!   ([`ClientConfig`]), which pongs may change.
//! - [`frame`]: the binary protobuf frames (`pbbp2`): pings, pongs, data and acks.
//! - [`LongConnection`]: pings with the connection's service id, reassembles chunked payloads,
//!   hands each whole payload to a [`FrameHandler`] on its own task and writes the ack, and
//!   reconnects as the server's config says.
//!
//! Invariants: a payload is acked only with its handler's answer (code 200 with the answer as
//! data, or 500 when it failed); one the handler could not take ([`HandlerError::Retry`]) is
//! never acked, so Feishu pushes it again; a replaced connection is closed only after its
//! successor was dialed; the App Secret never reaches a log or an error.

mod backoff;
mod chunks;
mod client;
pub mod endpoint;
mod error;
pub mod frame;

use workmate_adapter::BoxFuture;

pub use chunks::{MAX_PARTIALS, PARTIAL_TTL};
pub use client::{HANDLER_TIMEOUT, LongConnection, MAX_IN_FLIGHT, SILENT_PINGS, Timings};
pub use endpoint::ClientConfig;
pub use error::Error;

/// Why a handler did not answer a payload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HandlerError {
    /// The delivery could not be stored durably: leave it unacked so Feishu pushes it again.
    #[error("the delivery was not taken; Feishu will push it again")]
    Retry,
    /// The delivery was taken but handling it failed: ack it with code 500.
    #[error("handling the delivery failed: {0}")]
    Failed(String),
}

/// Where the long connection delivers payloads.
pub trait FrameHandler: Send + Sync + std::fmt::Debug {
    /// Handles one whole data payload (the event JSON, same as the webhook's, unencrypted).
    /// `kind` is the frame's `type` header (`"event"` or `"card"`).
    ///
    /// `Ok(response)` (JSON bytes, e.g. `{}` or a card callback's `{"toast":…,"card":…}`) is
    /// acked with code 200 and that data; `Err(Retry)` leaves the frame unacked (the delivery
    /// could not be stored durably: Feishu pushes it again); `Err(Failed(_))` acks with code
    /// 500. Several payloads may be in flight at once, each on its own task.
    fn handle(&self, kind: &str, payload: Vec<u8>) -> BoxFuture<'_, Result<Vec<u8>, HandlerError>>;
}
