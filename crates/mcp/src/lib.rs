//! workmate's MCP client: each tenant's admins register servers (a program started in the exec
//! sandbox and spoken to over stdio, or a streamable HTTP endpoint); their tools are offered to
//! the tenant's turns as `mcp__<server>__<tool>`, asking for approval unless an admin marked a
//! tool read-only.
//!
//! Invariants: a stdio server sees only the folders its definition lists, each inside a root the
//! operator allowed (and a read-only system), never the data directory or the server's
//! environment; an http server is reached only through the guarded egress; a stored definition
//! holds no secret in clear; every call has a deadline; a
//! crashed server is restarted with backoff, and calls meanwhile fail at once saying so; a server
//! that cannot start never fails a turn, its tools are only left out; a server people sign in to
//! (OAuth) is called with each person's own token and offers its tools only to those who did.

mod client;
mod definition;
mod error;
mod folders;
mod manager;
mod oauth;
mod secrets;
mod server;
mod source;
mod tool;

pub use definition::{
    DEFAULT_TIMEOUT_S, Folder, MAX_NAME_LEN, MAX_TIMEOUT_S, OAuthDef, ServerDef, Transport,
    check_name,
};
pub use error::{Error, Result};
pub use folders::FolderPolicy;
pub use manager::{McpManager, McpSettings, ServerStatus, ToolInfo};
pub use oauth::grant_secret;
pub use server::ServerState;
pub use source::McpSource;
pub use tool::{CATEGORY, metadata, tool_name};
