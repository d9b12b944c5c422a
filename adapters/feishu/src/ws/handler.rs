//! What the long connection hands a whole data payload to.

use workmate_adapter::BoxFuture;

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
