//! Connect links: where a person opens the form (or the sign-in) that connects a connector for
//! them. The chat layer only shows the link, privately; whoever implements [`ConnectLinks`] (the
//! server: a signed, expiring token for its connect pages) makes it, so no secret ever passes
//! through a chat message.

use std::fmt;

use workmate_protocol::{TenantId, UserId};

/// How a connect request names an MCP server instead of a connector: `mcp:<server>`.
pub const MCP_TARGET_PREFIX: &str = "mcp:";

/// Whom a connect link is for, and what it connects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectRequest {
    /// The tenant.
    pub tenant: TenantId,
    /// The workmate user who asked.
    pub user: UserId,
    /// Their name, for the page.
    pub name: String,
    /// The connector (`github`), or [`MCP_TARGET_PREFIX`] and an MCP server's name
    /// (`mcp:wiki`) for a server people sign in to.
    pub connector: String,
    /// Whether it connects for the whole tenant (an admin asked with `team`).
    pub team: bool,
}

/// A link that connects something for one person: its URL, and the confirmation code the page
/// asks for (shown only beside the link, in the person's private card).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectLink {
    /// Where the person opens it.
    pub url: String,
    /// What they type on the page to show it is theirs (`K7QF-2MXA`).
    pub code: String,
}

/// Makes connect links.
pub trait ConnectLinks: Send + Sync + fmt::Debug {
    /// A link, valid for a limited time and once, at which `request`'s person connects the
    /// connector.
    fn connect_link(&self, request: &ConnectRequest) -> ConnectLink;

    /// How long a link works, for the card (`15 minutes`).
    fn valid_for(&self) -> &'static str;
}
