//! The engine's error type.

use workmate_protocol::SessionId;

/// What can go wrong driving a session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
    /// A step of the session could not be stored; the session is reloaded before its next turn.
    #[error("the session's history could not be stored: {0}")]
    Log(workmate_store::StepError),
    /// The tenant has no such session.
    #[error("session {0} not found")]
    SessionNotFound(SessionId),
    /// The session is running a turn and the command needs it idle.
    #[error("session {0} is running a turn; wait for it to end or interrupt it first")]
    Busy(SessionId),
    /// Another workmate process drives the session (it holds the session's lease).
    #[error(
        "session {0} is being driven by another workmate process; its turn continues there (try again shortly)"
    )]
    DrivenElsewhere(SessionId),
    /// The caller may not do this; the text says why.
    #[error("{0}")]
    Forbidden(String),
    /// The command cannot apply now.
    #[error("{0}")]
    Rejected(String),
    /// The engine is shutting down.
    #[error("the engine is shutting down")]
    ShuttingDown,
}

impl From<workmate_personas::Error> for Error {
    fn from(error: workmate_personas::Error) -> Self {
        match error {
            workmate_personas::Error::Store(e) => Self::Store(e),
            other => Self::Rejected(other.to_string()),
        }
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
