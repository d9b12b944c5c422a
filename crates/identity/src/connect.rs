//! Connecting a person's account at another system (a connector) from chat: the claim a
//! "connect" link carries, and the OAuth 2.0 authorization-code flow (with PKCE) that gets the
//! person's grant from that system.
//!
//! Invariants: a connect token names exactly one workmate user, one connector and whether it
//! connects for the person or (for an admin) the whole tenant; it verifies only under this
//! installation's key and its purpose label, and expires [`CONNECT_TTL_SECS`] after it was made.
//! An OAuth flow's state and PKCE verifier travel only in a sealed, short-lived cookie of the
//! browser that started it (never in a URL), and the code is exchanged only when the state the
//! provider returns is that cookie's. Tokens and secrets never reach a log or an error.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use crate::error::{Error, Refusal, Result};
use crate::session::SessionKey;

const CONNECT_PURPOSE: &[u8] = b"workmate-connect.v1.";
const CODE_PURPOSE: &[u8] = b"workmate-connect-code.v1.";
/// The letters of a confirmation code: Crockford's base 32 (no I, L, O or U to misread).
const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const OAUTH_PURPOSE: &[u8] = b"workmate-connect-oauth.v1.";

/// How long a connect link stays valid.
pub const CONNECT_TTL_SECS: i64 = 15 * 60;
/// How long a started OAuth flow may take.
pub const OAUTH_TTL_SECS: i64 = 10 * 60;

/// Whom a connect link connects, to what. Unix seconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectClaim {
    /// The tenant.
    #[serde(rename = "t")]
    pub tenant: String,
    /// The workmate user who asked.
    #[serde(rename = "u")]
    pub user_id: String,
    /// Their name, for the page.
    #[serde(rename = "n")]
    pub name: String,
    /// The connector (`github`).
    #[serde(rename = "c")]
    pub connector: String,
    /// Whether the credentials are the tenant's (an admin connecting for everyone).
    #[serde(rename = "w", default)]
    pub team: bool,
    /// The link's own id (random): what spends it, and what its confirmation code is made of.
    #[serde(rename = "l", default)]
    pub link: String,
    /// Expiry, Unix seconds.
    #[serde(rename = "e")]
    pub expires_at: i64,
}

/// A started OAuth flow, kept sealed in the browser's cookie until the provider sends it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthPending {
    /// The `state` sent to the provider.
    #[serde(rename = "s")]
    pub state: String,
    /// The PKCE code verifier.
    #[serde(rename = "v")]
    pub verifier: String,
    /// What it connects.
    #[serde(rename = "c")]
    pub claim: ConnectClaim,
    /// Expiry, Unix seconds.
    #[serde(rename = "e")]
    pub expires_at: i64,
}

impl SessionKey {
    /// The claim as a connect token.
    pub fn seal_connect(&self, claim: &ConnectClaim) -> String {
        self.seal(CONNECT_PURPOSE, claim)
    }

    /// The claim in a connect token, if its MAC verifies and it has not expired at `now`.
    pub fn open_connect(&self, token: &str, now: i64) -> Result<ConnectClaim, Refusal> {
        let claim: ConnectClaim = self.open(CONNECT_PURPOSE, token)?;
        if claim.expires_at <= now {
            return Err(Refusal::CookieExpired);
        }
        Ok(claim)
    }

    /// The confirmation code of a connect link (`K7QF-2MXA`): shown beside the link in the
    /// private card, asked for on the page, so a link alone (forwarded, or posted from another
    /// site) connects nothing. 40 bits, made with this installation's key.
    pub fn connect_code(&self, claim: &ConnectClaim) -> String {
        let tag = self.tag(CODE_PURPOSE, &format!("{}|{}", claim.tenant, claim.link));
        let mut code = String::with_capacity(9);
        for (i, byte) in tag.iter().take(8).enumerate() {
            if i == 4 {
                code.push('-');
            }
            code.push(char::from(CODE_ALPHABET[usize::from(byte & 31)]));
        }
        code
    }

    /// Whether `typed` is the link's confirmation code (case, spaces and dashes aside),
    /// compared in constant time.
    pub fn connect_code_matches(&self, claim: &ConnectClaim, typed: &str) -> bool {
        let clean = |text: &str| -> Vec<u8> {
            text.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .map(|c| c.to_ascii_uppercase() as u8)
                .collect()
        };
        crate::provider::constant_time_eq(&clean(&self.connect_code(claim)), &clean(typed))
    }

    /// A started OAuth flow as a cookie value.
    pub fn seal_oauth(&self, pending: &OAuthPending) -> String {
        self.seal(OAUTH_PURPOSE, pending)
    }

    /// The started OAuth flow in a cookie value, if its MAC verifies and it has not expired.
    pub fn open_oauth(&self, cookie: &str, now: i64) -> Result<OAuthPending, Refusal> {
        let pending: OAuthPending = self.open(OAUTH_PURPOSE, cookie)?;
        if pending.expires_at <= now {
            return Err(Refusal::CookieExpired);
        }
        Ok(pending)
    }
}

/// An OAuth client registered at another system, for its authorization-code flow.
#[derive(Clone)]
pub struct OAuthApp {
    /// The client id.
    pub client_id: String,
    /// The client secret (sent in the token request's body).
    pub client_secret: SecretString,
    /// The authorization endpoint.
    pub authorize_url: Url,
    /// The token endpoint.
    pub token_url: Url,
    /// The scopes asked for.
    pub scopes: Vec<String>,
    /// More query parameters of the authorization request (`access_type=offline`).
    pub extra_params: Vec<(String, String)>,
    /// The resource the tokens are for (RFC 8707: an MCP server's URL), sent with the
    /// authorization and every token request.
    pub resource: Option<String>,
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("client_id", &self.client_id)
            .field("authorize_url", &self.authorize_url.as_str())
            .field("token_url", &self.token_url.as_str())
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// What the provider granted.
pub struct OAuthGrant {
    /// The access token.
    pub access_token: SecretString,
    /// The refresh token, when the provider gave one.
    pub refresh_token: Option<SecretString>,
    /// The access token's lifetime in seconds, when given.
    pub expires_in: Option<u64>,
}

impl std::fmt::Debug for OAuthGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthGrant")
            .field("refresh_token", &self.refresh_token.is_some())
            .field("expires_in", &self.expires_in)
            .finish_non_exhaustive()
    }
}

/// 32 random bytes, base64url.
fn random_token() -> String {
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    URL_SAFE_NO_PAD.encode(bytes)
}

impl OAuthApp {
    /// Starts a flow for `claim`: the provider's authorization URL (code flow, PKCE S256, a
    /// fresh state) and what the callback needs, to keep sealed in the browser's cookie.
    pub fn start(&self, redirect: &Url, claim: ConnectClaim, now: i64) -> (Url, OAuthPending) {
        let (state, verifier) = (random_token(), random_token());
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let mut url = self.authorize_url.clone();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &self.client_id)
                .append_pair("redirect_uri", redirect.as_str())
                .append_pair("state", &state)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256");
            if !self.scopes.is_empty() {
                query.append_pair("scope", &self.scopes.join(" "));
            }
            for (name, value) in &self.extra_params {
                query.append_pair(name, value);
            }
            if let Some(resource) = &self.resource {
                query.append_pair("resource", resource);
            }
        }
        let pending = OAuthPending {
            state,
            verifier,
            claim,
            expires_at: now + OAUTH_TTL_SECS,
        };
        (url, pending)
    }

    /// Finishes a flow: `state` must be the pending flow's; the code is exchanged (with the
    /// PKCE verifier) at the token endpoint.
    pub async fn finish(
        &self,
        http: &workmate_net::Egress,
        redirect: &Url,
        pending: &OAuthPending,
        code: &str,
        state: &str,
    ) -> Result<OAuthGrant> {
        if !crate::provider::constant_time_eq(pending.state.as_bytes(), state.as_bytes()) {
            return Err(Refusal::LoginMismatch("the state does not match".into()).into());
        }
        self.token_request(
            http,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirect.as_str()),
                ("code_verifier", &pending.verifier),
            ],
        )
        .await
    }

    /// A new access token for `refresh_token` (and, when the provider rotates them, a new
    /// refresh token).
    pub async fn refresh(
        &self,
        http: &workmate_net::Egress,
        refresh_token: &str,
    ) -> Result<OAuthGrant> {
        self.token_client().refresh(http, refresh_token).await
    }

    async fn token_request(
        &self,
        http: &workmate_net::Egress,
        pairs: &[(&str, &str)],
    ) -> Result<OAuthGrant> {
        self.token_client().request(http, pairs).await
    }

    fn token_client(&self) -> TokenClient<'_> {
        TokenClient {
            client_id: &self.client_id,
            client_secret: self.client_secret.expose_secret(),
            token_url: &self.token_url,
            resource: self.resource.as_deref(),
        }
    }
}

/// The most of a token endpoint's answer read (a grant is a few hundred bytes).
const MAX_TOKEN_ANSWER: usize = 256 * 1024;

/// A client at a token endpoint: what renews a grant without the rest of an [`OAuthApp`] (a
/// connector holding a refresh token and the client it was issued to).
#[derive(Clone, Copy)]
pub struct TokenClient<'a> {
    /// The client id.
    pub client_id: &'a str,
    /// Its secret; empty for a public client.
    pub client_secret: &'a str,
    /// The token endpoint.
    pub token_url: &'a Url,
    /// The resource the tokens are for (RFC 8707), if any.
    pub resource: Option<&'a str>,
}

impl std::fmt::Debug for TokenClient<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenClient")
            .field("client_id", &self.client_id)
            .field("token_url", &self.token_url.as_str())
            .finish_non_exhaustive()
    }
}

impl TokenClient<'_> {
    /// A new access token for `refresh_token` (RFC 6749 §6).
    pub async fn refresh(
        &self,
        http: &workmate_net::Egress,
        refresh_token: &str,
    ) -> Result<OAuthGrant> {
        self.request(
            http,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
            ],
        )
        .await
    }

    /// Posts `pairs` with the client's credentials (and the resource) to the token endpoint.
    async fn request(
        &self,
        http: &workmate_net::Egress,
        pairs: &[(&str, &str)],
    ) -> Result<OAuthGrant> {
        // Built before the first await: the serializer is not `Send`.
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.extend_pairs(pairs);
            form.append_pair("client_id", self.client_id);
            if !self.client_secret.is_empty() {
                form.append_pair("client_secret", self.client_secret);
            }
            if let Some(resource) = self.resource {
                form.append_pair("resource", resource);
            }
            form.finish()
        };
        let request = http
            .request(reqwest::Method::POST, self.token_url.clone())
            .header("Accept", "application/json")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body);
        let response = http
            .send_once(request)
            .await
            .map_err(|e| Error::Provider(format!("the token endpoint cannot be reached: {e}")))?;
        let status = response.status();
        let bytes = workmate_net::read_within(response, MAX_TOKEN_ANSWER)
            .await
            .map_err(|e| Error::Provider(format!("the token endpoint's answer: {e}")))?;
        let body: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::Provider(format!(
                "the token endpoint answered with something other than JSON (HTTP {}): {e}",
                status.as_u16()
            ))
        })?;
        let access = body["access_token"].as_str().filter(|t| !t.is_empty());
        let Some(access) = access.filter(|_| status.is_success()) else {
            let why = body["error_description"]
                .as_str()
                .or_else(|| body["error"].as_str())
                .or_else(|| body["msg"].as_str())
                .unwrap_or("no access token in the answer");
            // The other side's words: shown, so kept short.
            let why: String = why.chars().take(200).collect();
            return Err(Error::Provider(format!(
                "the token endpoint refused (HTTP {}): {why}",
                status.as_u16()
            )));
        };
        Ok(OAuthGrant {
            access_token: SecretString::from(access.to_owned()),
            refresh_token: body["refresh_token"]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(|t| SecretString::from(t.to_owned())),
            expires_in: body["expires_in"].as_u64(),
        })
    }
}

#[cfg(test)]
mod code_tests {
    use super::*;

    #[test]
    fn a_links_code_is_its_own_and_typed_loosely() {
        let key = SessionKey::from_bytes([4; 32]);
        let claim = |link: &str| ConnectClaim {
            tenant: "acme".into(),
            user_id: "ana".into(),
            name: "Ana".into(),
            connector: "github".into(),
            team: false,
            link: link.into(),
            expires_at: 0,
        };
        let code = key.connect_code(&claim("a"));
        assert_eq!(code.len(), 9, "{code}");
        assert_eq!(&code[4..5], "-");
        assert!(key.connect_code_matches(&claim("a"), &code.to_lowercase().replace('-', " ")));
        assert_ne!(code, key.connect_code(&claim("b")));
        assert!(!key.connect_code_matches(&claim("b"), &code));
        assert!(!key.connect_code_matches(&claim("a"), ""));
        let other_key = SessionKey::from_bytes([5; 32]);
        assert_ne!(code, other_key.connect_code(&claim("a")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(expires_at: i64) -> ConnectClaim {
        ConnectClaim {
            link: "l1".into(),
            tenant: "slack-T1".into(),
            user_id: "slack-U1".into(),
            name: "Ana".into(),
            connector: "gmail".into(),
            team: false,
            expires_at,
        }
    }

    #[test]
    fn a_connect_token_round_trips_until_it_expires_and_is_nothing_else() {
        let key = SessionKey::from_bytes([7; 32]);
        let token = key.seal_connect(&claim(1_000));
        assert_eq!(key.open_connect(&token, 999), Ok(claim(1_000)));
        assert_eq!(key.open_connect(&token, 1_000), Err(Refusal::CookieExpired));
        assert_eq!(
            key.open_link(&token, 0).map(|_| ()),
            Err(Refusal::BadCookie)
        );
        assert_eq!(
            key.open_oauth(&token, 0).map(|_| ()),
            Err(Refusal::BadCookie)
        );
        let other = SessionKey::from_bytes([8; 32]);
        assert_eq!(other.open_connect(&token, 0), Err(Refusal::BadCookie));
    }

    #[test]
    fn the_authorization_url_carries_pkce_and_a_fresh_state() {
        let app = OAuthApp {
            client_id: "cid".into(),
            client_secret: SecretString::from("cs".to_owned()),
            authorize_url: Url::parse("https://accounts.example/auth").unwrap(),
            token_url: Url::parse("https://accounts.example/token").unwrap(),
            scopes: vec!["mail.read".into(), "mail.send".into()],
            extra_params: vec![("access_type".into(), "offline".into())],
            resource: None,
        };
        let redirect = Url::parse("https://workmate.example/v1/connectors/oauth/callback").unwrap();
        let (url, pending) = app.start(&redirect, claim(0), 100);
        let query: std::collections::HashMap<String, String> =
            url.query_pairs().into_owned().collect();
        assert_eq!(query["response_type"], "code");
        assert_eq!(query["redirect_uri"], redirect.as_str());
        assert_eq!(query["scope"], "mail.read mail.send");
        assert_eq!(query["access_type"], "offline");
        assert_eq!(query["state"], pending.state);
        assert_eq!(
            query["code_challenge"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(pending.verifier.as_bytes()))
        );
        assert!(
            !url.as_str().contains(&pending.verifier),
            "the verifier stays in the cookie"
        );
        assert_eq!(pending.expires_at, 100 + OAUTH_TTL_SECS);
        let (_, again) = app.start(&redirect, claim(0), 100);
        assert_ne!(again.state, pending.state);
    }
}
