//! Stream mode: DingTalk pushes events, robot messages and card callbacks over a WebSocket the
//! app opens with its Client ID and Client Secret, so no public URL, signature or decryption
//! is involved. The connection runs on the kit's supervisor ([`workmate_adapter::ws`]).
//!
//! The module moves frames; it knows no tenant, session or chat layer.
//! - [`open`]: `POST /v1.0/gateway/connections/open` subscribes (every event, robot messages,
//!   card callbacks) and gives the endpoint with a single-use ticket.
//! - [`frame`]: the JSON frames: downstream messages, SYSTEM ping answers, acks.
//! - [`StreamClient`]: DingTalk's part of the supervised connection: a new `open` for every
//!   connection, SYSTEM pings answered, `disconnect` obeyed, each EVENT and CALLBACK handed to a
//!   [`StreamHandler`] and acked with its answer; exponential backoff, 1 s to 60 s, jittered.
//!
//! Invariants: a message is acked only after its handler answered: a callback with
//! `{"response": answer}`, an event with `SUCCESS`; a handler failure leaves a callback
//! unacked and acks an event `LATER`, so DingTalk pushes either again; a connection DingTalk
//! asks to leave is closed only after its successor was dialed; the Client Secret and the
//! ticket never reach a log or an error.

mod client;
mod error;
pub mod frame;
pub mod open;

use workmate_adapter::BoxFuture;

pub use client::{HANDLER_TIMEOUT, MAX_IN_FLIGHT, SILENT_PINGS, StreamClient, Timings};
pub use error::Error;

/// The kind of a downstream message that reaches a handler (SYSTEM messages never do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// An event subscription push (`type: EVENT`); acked `SUCCESS` or `LATER`.
    Event,
    /// A robot message or card callback (`type: CALLBACK`); acked with the handler's response.
    Callback,
}

/// Why a handler did not take a message: DingTalk is to push it again (an event is acked
/// `LATER`, a callback is not acked at all).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the DingTalk message was not handled ({0}); DingTalk will push it again")]
pub struct HandlerError(pub String);

/// Where the Stream client delivers messages.
pub trait StreamHandler: Send + Sync + std::fmt::Debug {
    /// Handles one message: `data` is the frame's `data` (a JSON string, e.g. the robot
    /// message), `topic` and `message_id` its headers.
    ///
    /// `Ok(value)` acks it: a callback's ack carries `{"response": value}` (for a card
    /// callback, the card update), an event's `{"status":"SUCCESS"}`. `Err` asks DingTalk to
    /// push it again. Several messages may be in flight at once, each on its own task, and the
    /// same `message_id` may arrive twice: dedupe on it.
    fn handle(
        &self,
        kind: FrameKind,
        topic: &str,
        message_id: &str,
        data: &str,
    ) -> BoxFuture<'_, Result<serde_json::Value, HandlerError>>;
}
