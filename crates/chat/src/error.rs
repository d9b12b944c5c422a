//! What the chat layer can fail with. Surfaces map it to their own answer (an HTTP status, a
//! notice in the thread); it never carries an HTTP type.

use workmate_protocol::SessionId;

/// A chat-layer failure.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
    /// The engine refused or failed.
    #[error(transparent)]
    Engine(#[from] workmate_engine::Error),
    /// A platform call failed after its retries.
    #[error(transparent)]
    Platform(#[from] workmate_adapter::AdapterError),
    /// The card plumbing failed.
    #[error(transparent)]
    Cards(#[from] workmate_adapter::Error),
    /// An automation could not be read or changed.
    #[error(transparent)]
    Automation(#[from] workmate_engine::automations::AutomationError),
    /// A stored delivery could not be read back.
    #[error("stored delivery is unreadable: {0}")]
    Unreadable(String),
    /// No platform is registered for the surface a delivery names.
    #[error("no {0} platform is configured")]
    NoPlatform(&'static str),
    /// The session stayed busy for every attempt.
    #[error("session {0} stayed busy")]
    Busy(SessionId),
    /// The chat layer is stopping and takes no new work.
    #[error("the chat layer is shutting down")]
    ShuttingDown,
    /// More deliveries than the per-minute limit came from one tenant's installation of a
    /// platform; this one is refused unacknowledged, and the platform sends it again later.
    #[error("over the limit of {limit} deliveries a minute from this workspace; try again in {} s", retry_after.as_secs().max(1))]
    OverLimit {
        /// The limit.
        limit: u32,
        /// When a delivery may be taken again.
        retry_after: std::time::Duration,
    },
    /// The sender's account was deactivated (offboarded): workmate no longer acts for them.
    #[error("{0} was deactivated")]
    Deactivated(workmate_protocol::UserId),
}

impl From<workmate_personas::Error> for ChatError {
    fn from(error: workmate_personas::Error) -> Self {
        match error {
            workmate_personas::Error::Store(e) => Self::Store(e),
            other => Self::Engine(other.into()),
        }
    }
}

/// What a deactivated person is told, wherever they try.
pub(crate) const DEACTIVATED: &str = "Your workmate account was deactivated by your organisation, so \
    workmate no longer acts for you. Ask an admin if this is a mistake.";

impl ChatError {
    /// Why a message was not taken, in words for the person who sent it (details stay in the
    /// log).
    pub fn for_people(&self) -> &'static str {
        match self {
            Self::Busy(_) | Self::Engine(workmate_engine::Error::Busy(_)) => {
                "it was still finishing the previous one"
            }
            Self::ShuttingDown | Self::Engine(workmate_engine::Error::ShuttingDown) => {
                "it is restarting"
            }
            Self::Deactivated(_) => "your account was deactivated",
            Self::OverLimit { .. } => {
                "too many messages arrived at once; send it again in a minute"
            }
            _ => "an internal error; the details are in the service log",
        }
    }
}

/// The chat layer's result type.
pub type Result<T, E = ChatError> = std::result::Result<T, E>;
