//! The open-platform client (`api.dingtalk.com`, the `v1.0` APIs): one app's access token, robot
//! messages and interactive cards.
//!
//! Invariants: every call carries a token with time left (cached, refreshed ahead of expiry, and
//! dropped and fetched once more when DingTalk says it is invalid); a call makes one attempt —
//! the chat layer's retry policy is the only retry layer — and its failure says whether a retry
//! can help: HTTP 429, DingTalk's QPS codes and the per-IP ban body are
//! [`WebError::RateLimited`], 5xx and transport failures [`WebError::Transient`], the monthly
//! API quota [`WebError::QuotaExhausted`], anything else [`WebError::Api`] with DingTalk's code
//! and message. The app secret and the token never reach a log or an error.

mod cards;
mod error;
mod robot;
mod token;

use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use secrecy::SecretString;
use serde_json::Value;
use workmate_adapter::net::retry_after;

pub use cards::{
    CREATE_AND_DELIVER_PATH, CallbackType, CardAudience, CardSpace, INSTANCES_PATH, STREAMING_KEY,
    STREAMING_PATH,
};
pub use error::WebError;
pub use robot::{
    BATCH_SEND_PATH, FILE_DOWNLOAD_PATH, GROUP_SEND_PATH, MAX_TEXT_BYTES, MsgKey, Recipient,
};
pub use token::TOKEN_PATH;
use token::TokenCache;

/// DingTalk's open platform (the new-style `v1.0` APIs).
pub const DINGTALK_API_BASE: &str = "https://api.dingtalk.com";
/// The header new-style APIs read the access token from.
pub const TOKEN_HEADER: &str = "x-acs-dingtalk-access-token";

/// A client for one app (its Client ID, which is also its robot code).
#[derive(Debug)]
pub struct DingTalkWeb {
    http: reqwest::Client,
    /// Reaches the download links DingTalk hands out (see
    /// [`workmate_adapter::net::link_egress`]).
    links: workmate_adapter::net::Egress,
    base: String,
    client_id: String,
    tokens: TokenCache,
}

impl DingTalkWeb {
    /// A client for app `client_id` (the AppKey) at `api_base` ([`DINGTALK_API_BASE`], or a
    /// fake server in tests).
    pub fn new(
        api_base: &str,
        client_id: &str,
        client_secret: SecretString,
    ) -> Result<Self, WebError> {
        let base = api_base.trim_end_matches('/').to_owned();
        url::Url::parse(&base)
            .map_err(|e| WebError::Config(format!("api_base {base:?} is not a URL: {e}")))?;
        let links = workmate_adapter::net::link_egress(
            &workmate_adapter::net::NetworkPolicy::public_only(),
            &base,
        )
        .map_err(WebError::Config)?;
        Ok(Self {
            http: workmate_adapter::net::http_client().map_err(WebError::Config)?,
            links,
            base,
            client_id: client_id.to_owned(),
            tokens: TokenCache::new(client_id, client_secret),
        })
    }

    /// The same client reaching download links under `network` (the operator's `[network]
    /// allow_private`) besides public addresses and the API base's host.
    pub fn with_network(
        mut self,
        network: &workmate_adapter::net::NetworkPolicy,
    ) -> Result<Self, WebError> {
        self.links =
            workmate_adapter::net::link_egress(network, &self.base).map_err(WebError::Config)?;
        Ok(self)
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The app's Client ID (AppKey), which is its robot code.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Calls an API with the app's token; the answer's JSON (`{}` for an empty body).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: &Value,
    ) -> Result<Value, WebError> {
        let token = self.tokens.get(self).await?;
        match self.send(method.clone(), path, body, Some(&token)).await {
            Err(e) if e.is_invalid_token() => {
                tracing::info!(
                    path,
                    "DingTalk refused the cached token; fetching a new one."
                );
                self.tokens.drop_token(&token).await;
                let token = self.tokens.get(self).await?;
                self.send(method, path, body, Some(&token)).await
            }
            other => other,
        }
    }

    /// One HTTP exchange; the answer's JSON when the status is 2xx.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        token: Option<&str>,
    ) -> Result<Value, WebError> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .http
            .request(method, &url)
            .header(CONTENT_TYPE, "application/json; charset=utf-8")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.header(TOKEN_HEADER, token);
        }
        let transient = |reason: String| WebError::Transient {
            path: path.to_owned(),
            reason,
        };
        let response = request.send().await.map_err(|e| transient(e.to_string()))?;
        let status = response.status();
        let asked = retry_after(response.headers().get(RETRY_AFTER));
        let bytes = response
            .bytes()
            .await
            .map_err(|e| transient(e.to_string()))?;
        let answer: Option<Value> = if bytes.iter().all(u8::is_ascii_whitespace) {
            Some(Value::Object(serde_json::Map::new()))
        } else {
            serde_json::from_slice(&bytes).ok()
        };
        error::check(path, status.as_u16(), asked, answer)
    }
}
