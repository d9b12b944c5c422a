//! The one place workmate builds HTTP clients.
//!
//! Two kinds of destination exist, and each has its own constructor:
//! - **Fixed by the operator** (a chat platform's API base, the model gateway): [`fixed_client`]
//!   gives a client with workmate's TLS set-up and timeouts and nothing else.
//! - **Influenced by anyone else** (a tenant's connector base URL, an MCP server, a third party's
//!   OAuth metadata, a URL a model asks for, a link in a platform's callback): only an [`Egress`]
//!   may send there. It refuses loopback, private, link-local, carrier-grade NAT, multicast and
//!   metadata addresses after name resolution, connects to the very address it checked, checks
//!   every redirect again (and drops credentials on a hop to another host), caps bodies while
//!   they stream, and sends credentials only over https, unless the operator's [`NetworkPolicy`]
//!   names the host or range (`[network] allow_private`).
//!
//! Invariant: no other crate of the workspace builds a `reqwest::Client` or a rustls client
//! configuration (a test greps the tree for it).

mod address;
mod body;
mod egress;
mod error;
mod fixed;
mod policy;
mod resolve;
mod tls;
mod token;

pub use address::forbidden_reason;
pub use body::{Capped, read_capped, read_within};
pub use egress::{Egress, EgressOptions};
pub use error::{EgressError, EgressErrorKind};
pub use fixed::{CALL_TIMEOUT, CONNECT_TIMEOUT, USER_AGENT, fixed_client};
pub use policy::{NetworkPolicy, PolicyError};
pub use resolve::resolve_allowed;
pub use tls::tls_config;
pub use token::{AccessToken, REFRESH_AHEAD, TokenCache};
