//! The toolkit's error type.

use crate::AdapterError;

/// What can go wrong in the shared adapter plumbing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Where cards are remembered failed (the store behind a [`crate::CardStore`]).
    #[error("card store: {0}")]
    CardStore(String),
    /// The platform refused or failed a call, after any retries.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    /// A card state could not be delivered; later states may still succeed.
    #[error("card {card} was not delivered: {reason}")]
    Delivery {
        /// Which card (`session/card_key`).
        card: String,
        /// The last failure.
        reason: String,
    },
    /// The component is shutting down and takes no more work.
    #[error("shutting down")]
    ShuttingDown,
    /// The caller passed something that can never work.
    #[error("invalid argument: {0}")]
    Invalid(String),
}

/// The toolkit's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
