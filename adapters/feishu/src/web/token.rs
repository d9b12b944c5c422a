//! The `tenant_access_token` cache.
//!
//! Invariant: the kit's [`AccessToken`]'s: one fetch at a time, and a token handed out only while
//! more than [`REFRESH_AHEAD`] of its life is left.

use std::time::Duration;

use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use workmate_adapter::AccessToken;

use super::{FeishuWeb, WebError};

/// How long before its expiry a token is replaced.
const REFRESH_AHEAD: Duration = Duration::from_secs(180);
/// The token endpoint.
const TOKEN_PATH: &str = "/open-apis/auth/v3/tenant_access_token/internal";

/// One app's token.
pub(super) struct TokenCache {
    app_id: String,
    app_secret: SecretString,
    token: AccessToken,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCache")
            .field("app_id", &self.app_id)
            .finish_non_exhaustive()
    }
}

impl TokenCache {
    pub(super) fn new(app_id: &str, app_secret: SecretString) -> Self {
        Self {
            app_id: app_id.to_owned(),
            app_secret,
            token: AccessToken::new(REFRESH_AHEAD),
        }
    }

    /// A token with time left, fetched when needed.
    pub(super) async fn get(&self, web: &FeishuWeb) -> Result<String, WebError> {
        self.token
            .get(|| async {
                let body =
                    json!({ "app_id": self.app_id, "app_secret": self.app_secret.expose_secret() });
                let answer = web
                    .send(Method::POST, TOKEN_PATH, Some(&body), None)
                    .await?;
                let token = answer
                    .get("tenant_access_token")
                    .and_then(Value::as_str)
                    .ok_or_else(|| WebError::Api {
                        path: TOKEN_PATH.into(),
                        code: -1,
                        msg: "no tenant_access_token in the answer".into(),
                    })?
                    .to_owned();
                let life = answer.get("expire").and_then(Value::as_u64).unwrap_or(7200);
                Ok((token, Duration::from_secs(life)))
            })
            .await
    }

    /// Forgets `token`, which Feishu refused (unless another call replaced it already).
    pub(super) async fn drop_token(&self, token: &str) {
        self.token.forget(token).await;
    }
}
