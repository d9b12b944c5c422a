//! What the Stream client hands each EVENT and CALLBACK message to.

use workmate_adapter::BoxFuture;

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
