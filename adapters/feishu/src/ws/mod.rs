//! The long connection ("use a long connection to receive events/callbacks"): Feishu pushes
//! events and card callbacks over a WebSocket the app opens with its App ID and App Secret,
//! so no public URL, signature or decryption is involved.
//!
//! The module moves frames and payload bytes; it knows no tenant, session or chat layer.
//! - [`endpoint`]: `POST /callback/ws/endpoint` gives the `wss://` URL and the server's timing
//!   ([`ClientConfig`]).
//! - [`frame`]: the binary protobuf frames (`pbbp2`): pings, pongs, data and acks.
//! - [`LongConnection`]: connects, pings, reassembles chunked payloads, hands each whole
//!   payload to a [`FrameHandler`] on its own task and writes the ack, and reconnects.
//!
//! Invariants: a payload is acked only with its handler's answer (code 200 with the answer as
//! data, or 500 when it failed); one the handler could not take ([`HandlerError::Retry`]) is
//! never acked, so Feishu pushes it again; a replaced connection is closed only after its
//! successor was dialed; the App Secret never reaches a log or an error.

mod backoff;
mod chunks;
mod client;
mod dial;
mod dispatch;
pub mod endpoint;
mod error;
pub mod frame;
mod handler;
mod session;

pub use chunks::{MAX_PARTIALS, PARTIAL_TTL};
pub use client::{LongConnection, Timings};
pub use dispatch::{HANDLER_TIMEOUT, MAX_IN_FLIGHT};
pub use endpoint::ClientConfig;
pub use error::Error;
pub use handler::{FrameHandler, HandlerError};
pub use session::SILENT_PINGS;
