//! The app's access token (`POST /v1.0/oauth2/accessToken`, valid 7,200 s).
//!
//! Invariant: the kit's [`AccessToken`]'s: one fetch at a time, and a token handed out only while
//! more than [`REFRESH_AHEAD`] of its life is left.

use std::time::Duration;

use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use workmate_adapter::AccessToken;

use super::{DingTalkWeb, WebError};

/// How long before its expiry a token is replaced.
const REFRESH_AHEAD: Duration = Duration::from_secs(180);
/// The token endpoint.
pub const TOKEN_PATH: &str = "/v1.0/oauth2/accessToken";
/// A token's life when the answer does not say.
const DEFAULT_LIFE: u64 = 7_200;

/// One app's token.
pub(super) struct TokenCache {
    client_id: String,
    client_secret: SecretString,
    token: AccessToken,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCache")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl TokenCache {
    pub(super) fn new(client_id: &str, client_secret: SecretString) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret,
            token: AccessToken::new(REFRESH_AHEAD),
        }
    }

    /// A token with time left, fetched when needed.
    pub(super) async fn get(&self, web: &DingTalkWeb) -> Result<String, WebError> {
        self.token
            .get(|| async {
                let body = json!({
                    "appKey": self.client_id,
                    "appSecret": self.client_secret.expose_secret(),
                });
                let answer = web.send(Method::POST, TOKEN_PATH, &body, None).await?;
                let token = answer
                    .get("accessToken")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| WebError::Api {
                        path: TOKEN_PATH.into(),
                        status: 200,
                        code: String::new(),
                        message: "no accessToken in the answer".into(),
                    })?
                    .to_owned();
                let life = answer
                    .get("expireIn")
                    .and_then(Value::as_u64)
                    .unwrap_or(DEFAULT_LIFE);
                Ok((token, Duration::from_secs(life)))
            })
            .await
    }

    /// Forgets `token`, which DingTalk refused (unless another call replaced it already).
    pub(super) async fn drop_token(&self, token: &str) {
        self.token.forget(token).await;
    }
}
