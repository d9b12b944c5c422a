//! Stream mode: DingTalk pushes events, robot messages and card callbacks over a WebSocket the
//! app opens with its Client ID and Client Secret, so no public URL, signature or decryption
//! is involved.
//!
//! The module moves frames; it knows no tenant, session or chat layer.
//! - [`open`]: `POST /v1.0/gateway/connections/open` subscribes (every event, robot messages,
//!   card callbacks) and gives the endpoint with a single-use ticket.
//! - [`frame`]: the JSON frames: downstream messages, SYSTEM ping answers, acks.
//! - [`StreamClient`]: connects, pings, hands each EVENT and CALLBACK to a [`StreamHandler`]
//!   on its own task, writes the ack, and reconnects (a new `open` each time) with
//!   exponential backoff, 1 s to 60 s, jittered.
//!
//! Invariants: a message is acked only after its handler answered: a callback with
//! `{"response": answer}`, an event with `SUCCESS`; a handler failure leaves a callback
//! unacked and acks an event `LATER`, so DingTalk pushes either again; a connection DingTalk
//! asks to leave is closed only after its successor was dialed; the Client Secret and the
//! ticket never reach a log or an error.

mod client;
mod dial;
mod dispatch;
mod error;
pub mod frame;
mod handler;
pub mod open;
mod session;

pub use client::{StreamClient, Timings};
pub use dispatch::{HANDLER_TIMEOUT, MAX_IN_FLIGHT};
pub use error::Error;
pub use handler::{FrameKind, HandlerError, StreamHandler};
pub use session::SILENT_PINGS;
