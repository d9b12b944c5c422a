//! Single sign-on for workmate: OpenID Connect login (authorization code with PKCE, state and
//! nonce), ID-token and bearer-token validation against the provider's keys, signed expiring
//! session cookies, and directory groups mapped to roles.
//!
//! Invariant: an [`Identity`] exists only for a token whose signature verified against the
//! provider's published keys and whose issuer, audience, expiry (and, at login, nonce) were
//! checked; a [`Session`] exists only for a cookie whose MAC verified under this installation's
//! key and which has not expired. Tokens and keys never reach a log.

mod connect;
mod error;
mod http;
mod link;
mod provider;
mod roles;
mod session;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
mod token;

pub use connect::{
    CONNECT_TTL_SECS, ConnectClaim, OAUTH_TTL_SECS, OAuthApp, OAuthGrant, OAuthPending, TokenClient,
};
pub use error::{Error, Refusal, Result};
pub use link::{LINK_TTL_SECS, LinkClaim};
pub use provider::{KEY_REFRESH_COOLDOWN, LoginStart, Oidc, OidcSettings};
pub use roles::{GroupRoles, Role};
pub use session::{LoginState, SESSION_KEY_FILE, Session, SessionKey};
pub use token::{Clock, Identity, OtherClaims};
