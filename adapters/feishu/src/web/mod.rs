//! The open-platform client: one app's `tenant_access_token`, messages and CardKit cards.
//!
//! Invariants: every call carries a fresh token (cached, refreshed ahead of expiry, and
//! dropped and fetched once more when Feishu says it is invalid); a call makes one attempt —
//! the chat layer's retry policy is the only retry layer — and its failure says whether a retry
//! can help: HTTP 429 and Feishu's rate-limit codes are [`WebError::RateLimited`], 5xx and
//! transport failures [`WebError::Transient`], and a 200 whose `code` is not 0 is a failure.

mod cardkit;
mod messages;
mod token;

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use secrecy::SecretString;
use serde_json::Value;
use workmate_adapter::AdapterError;
use workmate_adapter::net::retry_after;

pub use messages::ReceiveIdType;
use token::TokenCache;

/// Feishu's open platform.
pub const FEISHU_API_BASE: &str = "https://open.feishu.cn";
/// Lark's (international) open platform: the same paths.
pub const LARK_API_BASE: &str = "https://open.larksuite.com";

/// Codes that mean "the token is not valid": drop it and fetch a new one.
const INVALID_TOKEN_CODES: [i64; 3] = [99_991_661, 99_991_663, 99_991_668];
/// Codes that mean "too many requests".
const RATE_LIMIT_CODES: [i64; 4] = [99_991_400, 11_232, 230_020, 300_309];
/// The wait after a rate limit without a `Retry-After`.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// How a call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// The client cannot be built (a bad base URL, TLS set-up).
    #[error("Feishu client: {0}")]
    Config(String),
    /// HTTP 429 or a rate-limit code.
    #[error("Feishu {path}: rate limited")]
    RateLimited {
        /// The call.
        path: String,
        /// How long to wait.
        retry_after: Duration,
    },
    /// A 5xx, a timeout or a connection failure.
    #[error("Feishu {path}: {reason}")]
    Transient {
        /// The call.
        path: String,
        /// What happened.
        reason: String,
    },
    /// Feishu refused the call: `code` and `msg` say why.
    #[error("Feishu {path}: code {code}: {msg}")]
    Api {
        /// The call.
        path: String,
        /// Feishu's code.
        code: i64,
        /// Feishu's message.
        msg: String,
    },
}

impl WebError {
    /// The code of an API refusal.
    pub fn code(&self) -> Option<i64> {
        match self {
            Self::Api { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<WebError> for AdapterError {
    fn from(e: WebError) -> Self {
        match e {
            WebError::RateLimited { retry_after, .. } => Self::RateLimited { retry_after },
            WebError::Transient { .. } => Self::Transient(e.to_string()),
            WebError::Config(_) | WebError::Api { .. } => Self::Rejected(e.to_string()),
        }
    }
}

/// A client for one app.
#[derive(Debug)]
pub struct FeishuWeb {
    http: reqwest::Client,
    base: String,
    tokens: TokenCache,
}

impl FeishuWeb {
    /// A client for the app `app_id` at `base` ([`FEISHU_API_BASE`], [`LARK_API_BASE`], or a
    /// fake server in tests).
    pub fn new(base: &str, app_id: &str, app_secret: SecretString) -> Result<Self, WebError> {
        let base = base.trim_end_matches('/').to_owned();
        url::Url::parse(&base)
            .map_err(|e| WebError::Config(format!("api_base {base:?} is not a URL: {e}")))?;
        Ok(Self {
            http: workmate_adapter::net::http_client().map_err(WebError::Config)?,
            base,
            tokens: TokenCache::new(app_id, app_secret),
        })
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Calls an API with the app's token; the response's `data`.
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebError> {
        let token = self.tokens.get(self).await?;
        match self.send(method.clone(), path, body, Some(&token)).await {
            Err(e) if e.code().is_some_and(|c| INVALID_TOKEN_CODES.contains(&c)) => {
                tracing::info!(path, "Feishu refused the cached token; fetching a new one.");
                self.tokens.drop_token(&token).await;
                let token = self.tokens.get(self).await?;
                self.send(method, path, body, Some(&token)).await
            }
            other => other,
        }
    }

    /// One HTTP exchange; the whole body when `code` is 0.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> Result<Value, WebError> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url);
        if let Some(token) = token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json; charset=utf-8")
                .body(body.to_string());
        }
        let transient = |reason: String| WebError::Transient {
            path: path.to_owned(),
            reason,
        };
        let response = request.send().await.map_err(|e| transient(e.to_string()))?;
        let status = response.status();
        let asked = retry_after(response.headers().get(RETRY_AFTER))
            .or_else(|| retry_after(response.headers().get("x-ogw-ratelimit-reset")));
        let bytes = response
            .bytes()
            .await
            .map_err(|e| transient(e.to_string()))?;
        if status.as_u16() == 429 {
            return Err(WebError::RateLimited {
                path: path.to_owned(),
                retry_after: asked.unwrap_or(DEFAULT_RETRY_AFTER),
            });
        }
        if status.is_server_error() {
            return Err(transient(format!("HTTP {status}")));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| WebError::Api {
            path: path.to_owned(),
            code: -1,
            msg: format!("HTTP {status}, not JSON: {e}"),
        })?;
        let code = value.get("code").and_then(Value::as_i64).unwrap_or(-1);
        if code == 0 {
            return Ok(value);
        }
        if RATE_LIMIT_CODES.contains(&code) {
            return Err(WebError::RateLimited {
                path: path.to_owned(),
                retry_after: asked.unwrap_or(DEFAULT_RETRY_AFTER),
            });
        }
        let msg = value
            .get("msg")
            .and_then(Value::as_str)
            .unwrap_or("no message")
            .to_owned();
        tracing::warn!(path, code, msg = %msg, "Feishu call refused.");
        Err(WebError::Api {
            path: path.to_owned(),
            code,
            msg,
        })
    }
}

impl FeishuWeb {
    /// Fetches a file or image of a message (`GET /open-apis/im/v1/messages/{message_id}/
    /// resources/{key}?type=file|image`), at most `max_bytes`.
    pub async fn message_resource(
        &self,
        message_id: &str,
        key: &str,
        kind: &str,
        max_bytes: u64,
        what: &str,
    ) -> Result<workmate_adapter::Downloaded, AdapterError> {
        let id_like = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        };
        if !id_like(message_id) || !id_like(key) || !matches!(kind, "file" | "image") {
            return Err(AdapterError::Rejected(format!(
                "{what} has no valid Feishu message resource"
            )));
        }
        let token = self.tokens.get(self).await?;
        let url = format!(
            "{}/open-apis/im/v1/messages/{message_id}/resources/{key}?type={kind}",
            self.base
        );
        let request = self
            .http
            .get(url)
            .header(AUTHORIZATION, format!("Bearer {token}"));
        workmate_adapter::capped_get(request, max_bytes, what, DEFAULT_RETRY_AFTER).await
    }
}

/// A string field of a response's `data`.
pub(crate) fn data_str(value: &Value, path: &str, field: &str) -> Result<String, WebError> {
    value
        .pointer(&format!("/data/{field}"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| WebError::Api {
            path: path.to_owned(),
            code: -1,
            msg: format!("the response has no data.{field}"),
        })
}
