//! "Link your account" tokens: a chat account's claim, sealed with the installation's session
//! key, that a signed-in person redeems to bind that account to their directory subject.
//!
//! Invariants: a token names exactly one account (tenant, platform, platform user, workmate
//! user) and verifies only under this installation's key and purpose label (it can never pass
//! as a session or login cookie, nor they as it); it expires [`LINK_TTL_SECS`] after it was made.
//! A token shown to one person is theirs only because the platform showed it to them alone;
//! the confirmation page names the account before anything is bound, so a forwarded link cannot
//! bind someone without them seeing whose account it is.

use serde::{Deserialize, Serialize};

use crate::error::Refusal;
use crate::session::SessionKey;

const LINK_PURPOSE: &[u8] = b"workmate-link.v1.";

/// How long a link stays valid.
pub const LINK_TTL_SECS: i64 = 24 * 60 * 60;

/// The chat account a link token is for. Unix seconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkClaim {
    /// The account's tenant.
    #[serde(rename = "t")]
    pub tenant: String,
    /// The platform (`slack`, `feishu`, `wecom`, `dingtalk`, `sandbox`).
    #[serde(rename = "p")]
    pub platform: String,
    /// The platform's id of the person.
    #[serde(rename = "i")]
    pub platform_user: String,
    /// The workmate user of the account.
    #[serde(rename = "u")]
    pub user_id: String,
    /// The name the platform shows for them, for the confirmation page.
    #[serde(rename = "n")]
    pub name: String,
    /// Expiry, Unix seconds.
    #[serde(rename = "e")]
    pub expires_at: i64,
}

impl SessionKey {
    /// The claim as a link token.
    pub fn seal_link(&self, claim: &LinkClaim) -> String {
        self.seal(LINK_PURPOSE, claim)
    }

    /// The claim in a link token, if its MAC verifies and it has not expired at `now`.
    pub fn open_link(&self, token: &str, now: i64) -> Result<LinkClaim, Refusal> {
        let claim: LinkClaim = self.open(LINK_PURPOSE, token)?;
        if claim.expires_at <= now {
            return Err(Refusal::CookieExpired);
        }
        Ok(claim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    fn claim(expires_at: i64) -> LinkClaim {
        LinkClaim {
            tenant: "slack-T1".into(),
            platform: "slack".into(),
            platform_user: "U1".into(),
            user_id: "slack-U1".into(),
            name: "Ana".into(),
            expires_at,
        }
    }

    #[test]
    fn a_link_round_trips_until_it_expires_and_is_nothing_else() {
        let key = SessionKey::from_bytes([7; 32]);
        let token = key.seal_link(&claim(1_000));
        assert_eq!(key.open_link(&token, 999), Ok(claim(1_000)));
        assert_eq!(key.open_link(&token, 1_000), Err(Refusal::CookieExpired));
        assert_eq!(key.open_session(&token, 0), Err(Refusal::BadCookie));
        let session = key.seal_session(&Session {
            subject: "ana".into(),
            tenant: "default".into(),
            user_id: "sso:ana".into(),
            expires_at: 1_000,
        });
        assert_eq!(key.open_link(&session, 0), Err(Refusal::BadCookie));
        let other = SessionKey::from_bytes([8; 32]);
        assert_eq!(other.open_link(&token, 0), Err(Refusal::BadCookie));
    }
}
