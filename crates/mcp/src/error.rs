//! What can go wrong registering, starting or calling an MCP server.

/// An MCP error; its message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A definition or a name is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// The definition asks for what the operator does not allow (a folder outside
    /// `[mcp] folder_roots`, an address the network policy refuses, a secret in clear without a
    /// vault to move it to).
    #[error("{0}")]
    NotAllowed(String),
    /// No server of that name is registered.
    #[error("no MCP server named {0} is registered (see /workmate mcp list)")]
    NotFound(String),
    /// The server could not be started or reached.
    #[error("MCP server {server}: {message}")]
    Unavailable {
        /// The server.
        server: String,
        /// Why, and what to do.
        message: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] workmate_store::Error),
}

/// A result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
