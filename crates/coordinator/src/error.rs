//! The coordinator's errors.

/// What can go wrong talking to the coordinator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Redis refused or failed a command.
    #[error("Redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// Redis did not answer in time.
    #[error("Redis did not answer within {0:?}")]
    Timeout(std::time::Duration),
    /// The coordinator's background task has stopped.
    #[error("the coordinator has stopped")]
    Stopped,
}

/// The coordinator's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
