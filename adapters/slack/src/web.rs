//! A small client for the Slack Web API methods the adapter needs.
//!
//! Invariants: every call is a JSON `POST {api_base}/{method}` with the bot token as a bearer
//! header; the token is a [`SecretString`] that is exposed only to build that (sensitive) header
//! and never reaches a log or an error. A reply is a success only when it is HTTP 2xx *and* its
//! body says `"ok": true`; Slack's `{"ok": false, "error": …}` becomes [`WebError::Api`]. HTTP
//! 429 waits for `Retry-After` (capped) and 5xx backs off, each a bounded number of times; other
//! statuses and transport errors are not retried, since a lost response to `chat.postMessage`
//! may mean the message was posted and a retry would post it twice.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use workmate_adapter::net::retry_after;

/// What a Web API call can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// The client could not be set up (TLS, a malformed base URL or token).
    #[error("cannot set up the Slack client: {0}")]
    Config(String),
    /// Slack answered `{"ok": false, "error": …}`.
    #[error("Slack {method} failed: {error}")]
    Api {
        /// The Web API method.
        method: &'static str,
        /// Slack's error code (`channel_not_found`, `invalid_blocks`, `not_authed`, …).
        error: String,
    },
    /// An HTTP status other than success (after the retries, for 429 and 5xx).
    #[error("Slack {method} answered HTTP {status}")]
    Http {
        /// The Web API method.
        method: &'static str,
        /// The status code.
        status: u16,
        /// For a 429, the wait Slack asked for (`Retry-After`), when readable.
        retry_after: Option<Duration>,
    },
    /// No response: connection, TLS or timeout.
    #[error("cannot reach Slack for {method}: {source}")]
    Transport {
        /// The Web API method.
        method: &'static str,
        /// reqwest's description (it names the URL, never the headers).
        #[source]
        source: reqwest::Error,
    },
    /// A 2xx reply whose body is not the JSON this method returns.
    #[error("Slack {method} returned an unexpected body: {source}")]
    Decode {
        /// The Web API method.
        method: &'static str,
        /// serde_json's description.
        #[source]
        source: serde_json::Error,
    },
}

/// Crate-wide result for Web API calls.
pub type Result<T, E = WebError> = std::result::Result<T, E>;

/// How a call retries. [`Default`] is what Slack's docs and SDKs suggest; tests shorten it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a 429 is retried.
    pub rate_limit_retries: u32,
    /// The longest wait for one 429, whatever `Retry-After` says.
    pub max_retry_after: Duration,
    /// The wait when a 429 has no readable `Retry-After`.
    pub default_retry_after: Duration,
    /// The waits before each retry of a 5xx; its length is the number of retries.
    pub server_error_backoff: Vec<Duration>,
}

impl RetryPolicy {
    /// No retries: the caller retries (the chat layer's one retry policy), and sees a 429's
    /// `Retry-After` in [`WebError::Http`].
    pub fn none() -> Self {
        Self {
            rate_limit_retries: 0,
            server_error_backoff: Vec::new(),
            ..Self::default()
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            rate_limit_retries: 3,
            max_retry_after: Duration::from_secs(30),
            default_retry_after: Duration::from_secs(1),
            server_error_backoff: vec![
                Duration::from_millis(500),
                Duration::from_secs(1),
                Duration::from_secs(2),
            ],
        }
    }
}

/// The metadata event type of workmate's cards: their post key rides in its payload.
const CARD_EVENT: &str = "workmate_card";
/// How many messages [`SlackWeb::find_keyed`] reads.
const FIND_PAGE: u32 = 200;

/// A message that Slack accepted: its id is `(channel, ts)`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct PostedMessage {
    /// The conversation id (`C…`, `D…`, `G…`).
    pub channel: String,
    /// The message timestamp, Slack's message id within the channel.
    pub ts: String,
}

/// Who the bot token belongs to (`auth.test`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct AuthInfo {
    /// The workspace.
    pub team_id: String,
    /// The bot's user id (`U…`): mentions of it address the bot.
    pub user_id: String,
    /// The bot id (`B…`): events carrying it are the bot's own messages. Absent for user tokens.
    #[serde(default)]
    pub bot_id: Option<String>,
}

/// What `users.info` says about a person.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserInfo {
    /// The name Slack shows for them.
    pub name: Option<String>,
    /// Their IANA time zone.
    pub tz: Option<String>,
    /// Their e-mail address (only with the `users:read.email` scope).
    pub email: Option<String>,
}

/// A Slack Web API client for one bot token.
#[derive(Clone, Debug)]
pub struct SlackWeb {
    http: reqwest::Client,
    api_base: String,
    token: SecretString,
    retry: RetryPolicy,
}

impl SlackWeb {
    /// A client for `api_base` (`https://slack.com/api` in production, a fake server in tests).
    pub fn new(api_base: &str, bot_token: SecretString) -> Result<Self> {
        let api_base = api_base.trim_end_matches('/').to_owned();
        reqwest::Url::parse(&api_base)
            .map_err(|e| WebError::Config(format!("api_base {api_base:?} is not a URL: {e}")))?;
        let http = workmate_adapter::net::http_client().map_err(WebError::Config)?;
        Ok(Self {
            http,
            api_base,
            token: bot_token,
            retry: RetryPolicy::default(),
        })
    }

    /// The same client with another retry policy.
    #[must_use]
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// `chat.postMessage`: a new message, in a thread when `thread_ts` is given.
    pub async fn post_message(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        blocks: &Value,
        text: &str,
    ) -> Result<PostedMessage> {
        self.post_keyed(channel, thread_ts, blocks, text, None)
            .await
    }

    /// `chat.postMessage` of a card whose post key (see `workmate_adapter::Posting`) travels as
    /// the message's metadata, so [`SlackWeb::find_keyed`] can find the message again.
    pub async fn post_keyed(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        blocks: &Value,
        text: &str,
        key: Option<&str>,
    ) -> Result<PostedMessage> {
        let mut body = json!({ "channel": channel, "text": text, "blocks": blocks });
        if let Some(object) = body.as_object_mut() {
            if let Some(thread_ts) = thread_ts {
                object.insert("thread_ts".into(), thread_ts.into());
            }
            if let Some(key) = key {
                object.insert(
                    "metadata".into(),
                    json!({ "event_type": CARD_EVENT, "event_payload": { "key": key } }),
                );
            }
        }
        self.call("chat.postMessage", &body).await
    }

    /// The message posted with the post key `key` ([`SlackWeb::post_keyed`]) in `thread_ts` of
    /// `channel` (`conversations.replies`), or among the channel's newest messages without a
    /// thread (`conversations.history`); `None` when there is none. Reads one page of
    /// [`FIND_PAGE`] messages, newest first where Slack sorts so.
    pub async fn find_keyed(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        key: &str,
    ) -> Result<Option<PostedMessage>> {
        #[derive(Deserialize)]
        struct Found {
            #[serde(default)]
            messages: Vec<Value>,
        }
        let (method, form) = {
            let limit = FIND_PAGE.to_string();
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.append_pair("channel", channel)
                .append_pair("include_all_metadata", "true")
                .append_pair("limit", &limit);
            let method = match thread_ts {
                Some(thread_ts) => {
                    form.append_pair("ts", thread_ts);
                    "conversations.replies"
                }
                None => "conversations.history",
            };
            (method, form.finish().into_bytes())
        };
        let found: Found = self
            .send(method, "application/x-www-form-urlencoded", form)
            .await?;
        Ok(found
            .messages
            .iter()
            .find(|m| {
                m["metadata"]["event_type"] == CARD_EVENT
                    && m["metadata"]["event_payload"]["key"] == key
            })
            .and_then(|m| m["ts"].as_str())
            .map(|ts| PostedMessage {
                channel: channel.to_owned(),
                ts: ts.to_owned(),
            }))
    }

    /// `chat.update`: replaces the text and blocks of the message `(channel, ts)`.
    pub async fn update_message(
        &self,
        channel: &str,
        ts: &str,
        blocks: &Value,
        text: &str,
    ) -> Result<PostedMessage> {
        let body = json!({ "channel": channel, "ts": ts, "text": text, "blocks": blocks });
        self.call("chat.update", &body).await
    }

    /// `chat.postEphemeral`: a message only `user` sees, in `channel` (in the thread `thread_ts`
    /// when given, where the person clicked), as `blocks` when given, else as `text`.
    pub async fn post_ephemeral(
        &self,
        channel: &str,
        thread_ts: Option<&str>,
        user: &str,
        blocks: Option<&Value>,
        text: &str,
    ) -> Result<()> {
        let mut body = json!({ "channel": channel, "user": user, "text": text });
        if let (Some(blocks), Some(object)) = (blocks, body.as_object_mut()) {
            object.insert("blocks".into(), blocks.clone());
        }
        if let (Some(thread_ts), Some(object)) = (thread_ts, body.as_object_mut()) {
            object.insert("thread_ts".into(), thread_ts.into());
        }
        self.call::<Value>("chat.postEphemeral", &body)
            .await
            .map(drop)
    }

    /// `auth.test`: who the token belongs to.
    pub async fn auth_test(&self) -> Result<AuthInfo> {
        self.call("auth.test", &json!({})).await
    }

    /// `apps.connections.open`: a Socket Mode WebSocket URL (`wss://…`). The client's token must
    /// be the app-level token (`xapp-…`, scope `connections:write`), not the bot token.
    pub async fn apps_connections_open(&self) -> Result<String> {
        #[derive(Deserialize)]
        struct Opened {
            url: String,
        }
        let opened: Opened = self.call("apps.connections.open", &json!({})).await?;
        Ok(opened.url)
    }

    /// `users.info`: the name and IANA time zone Slack has for `user`. The method takes form
    /// fields, not JSON.
    pub async fn user_info(&self, user: &str) -> Result<UserInfo> {
        #[derive(Deserialize)]
        struct Profile {
            #[serde(default)]
            display_name: String,
            #[serde(default)]
            real_name: String,
            #[serde(default)]
            email: Option<String>,
        }
        #[derive(Deserialize)]
        struct User {
            #[serde(default)]
            name: String,
            #[serde(default)]
            real_name: String,
            #[serde(default)]
            tz: Option<String>,
            #[serde(default)]
            profile: Option<Profile>,
        }
        #[derive(Deserialize)]
        struct Info {
            user: User,
        }
        let form: String = form_urlencoded::Serializer::new(String::new())
            .append_pair("user", user)
            .finish();
        let info: Info = self
            .send(
                "users.info",
                "application/x-www-form-urlencoded",
                form.into_bytes(),
            )
            .await?;
        let user = info.user;
        let profile = user.profile.unwrap_or(Profile {
            display_name: String::new(),
            real_name: String::new(),
            email: None,
        });
        let email = profile.email.filter(|e| e.contains('@'));
        // Slack shows the display name when set, else the real name; the handle is the last resort.
        let name = [
            profile.display_name,
            profile.real_name,
            user.real_name,
            user.name,
        ]
        .into_iter()
        .map(|n| n.trim().to_owned())
        .find(|n| !n.is_empty());
        Ok(UserInfo {
            name,
            email,
            tz: user.tz.filter(|tz| !tz.is_empty()),
        })
    }

    /// Fetches a shared file from its private URL with the bot token, at most `max_bytes`. The
    /// token goes only to Slack's file host (`files.slack.com`) or the API's own host, never to
    /// another URL a delivery names.
    pub async fn download(
        &self,
        url: &str,
        max_bytes: u64,
        what: &str,
    ) -> std::result::Result<workmate_adapter::Downloaded, workmate_adapter::AdapterError> {
        use workmate_adapter::AdapterError;
        let parsed = reqwest::Url::parse(url)
            .map_err(|_| AdapterError::Rejected(format!("{what} has no valid Slack link")))?;
        let api = reqwest::Url::parse(&self.api_base).ok();
        let api_origin = api.as_ref().map(reqwest::Url::origin);
        let slack_host = parsed.scheme() == "https"
            && parsed
                .host_str()
                .is_some_and(|h| h == "files.slack.com" || h.ends_with(".slack.com"));
        if !slack_host && Some(parsed.origin()) != api_origin {
            return Err(AdapterError::Rejected(format!(
                "{what} is not on Slack's file host, so workmate does not send its token there"
            )));
        }
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", self.token.expose_secret()))
            .map_err(|_| {
                AdapterError::Rejected("the bot token is not a valid header value".into())
            })?;
        auth.set_sensitive(true);
        let request = self.http.get(parsed).header(AUTHORIZATION, auth);
        workmate_adapter::capped_get(request, max_bytes, what, self.retry.default_retry_after).await
    }

    /// One Web API call with a JSON body.
    async fn call<T: DeserializeOwned>(&self, method: &'static str, body: &Value) -> Result<T> {
        let body =
            serde_json::to_vec(body).map_err(|source| WebError::Decode { method, source })?;
        self.send(method, "application/json; charset=utf-8", body)
            .await
    }

    /// One Web API call, retried on 429 and 5xx as the policy says.
    async fn send<T: DeserializeOwned>(
        &self,
        method: &'static str,
        content_type: &'static str,
        body: Vec<u8>,
    ) -> Result<T> {
        let url = format!("{}/{method}", self.api_base);
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", self.token.expose_secret()))
            .map_err(|_| WebError::Config("the bot token is not a valid header value".into()))?;
        auth.set_sensitive(true);
        let mut rate_limited = 0;
        let mut server_errors = 0;
        loop {
            let response = self
                .http
                .post(&url)
                .header(AUTHORIZATION, auth.clone())
                .header(CONTENT_TYPE, content_type)
                .body(body.clone())
                .send()
                .await
                .map_err(|source| WebError::Transport { method, source })?;
            let status = response.status();
            if status.is_success() {
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|source| WebError::Transport { method, source })?;
                return decode(method, &bytes);
            }
            let asked = retry_after(response.headers().get(RETRY_AFTER));
            let wait = if status.as_u16() == 429 && rate_limited < self.retry.rate_limit_retries {
                rate_limited += 1;
                let wait = asked
                    .unwrap_or(self.retry.default_retry_after)
                    .min(self.retry.max_retry_after);
                Some(wait)
            } else if status.is_server_error() {
                let wait = self.retry.server_error_backoff.get(server_errors).copied();
                server_errors += 1;
                wait
            } else {
                None
            };
            let Some(wait) = wait else {
                tracing::warn!(method, status = status.as_u16(), "Slack call failed.");
                return Err(WebError::Http {
                    method,
                    status: status.as_u16(),
                    retry_after: asked,
                });
            };
            tracing::info!(
                method,
                status = status.as_u16(),
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                "Slack call will be retried."
            );
            tokio::time::sleep(wait).await;
        }
    }
}

/// A 2xx body: `ok: true` and the method's fields, or `ok: false` and an error code.
fn decode<T: DeserializeOwned>(method: &'static str, bytes: &[u8]) -> Result<T> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|source| WebError::Decode { method, source })?;
    if value.get("ok").and_then(Value::as_bool) != Some(true) {
        let error = value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error")
            .to_owned();
        tracing::warn!(method, error = %error, "Slack call rejected.");
        return Err(WebError::Api { method, error });
    }
    if let Some(warning) = value.get("warning").and_then(Value::as_str) {
        tracing::debug!(method, warning, "Slack call succeeded with a warning.");
    }
    T::deserialize(value).map_err(|source| WebError::Decode { method, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_false_is_an_api_error_and_ok_true_decodes() {
        let err = decode::<Value>(
            "chat.update",
            br#"{"ok":false,"error":"message_not_found"}"#,
        )
        .unwrap_err();
        assert!(
            matches!(&err, WebError::Api { method: "chat.update", error } if error == "message_not_found")
        );
        let posted: PostedMessage = decode(
            "chat.postMessage",
            br#"{"ok":true,"channel":"C1","ts":"1.2"}"#,
        )
        .unwrap();
        assert_eq!(posted.ts, "1.2");
        assert!(matches!(
            decode::<PostedMessage>("chat.postMessage", br#"{"ok":true}"#),
            Err(WebError::Decode { .. })
        ));
        assert_eq!(
            retry_after(Some(&HeaderValue::from_static(" 7 "))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(retry_after(Some(&HeaderValue::from_static("soon"))), None);
    }

    #[test]
    fn debug_never_shows_the_token() {
        let web = SlackWeb::new(
            "https://slack.com/api/",
            SecretString::from("xoxb-secret-1"),
        )
        .unwrap();
        assert!(!format!("{web:?}").contains("xoxb-secret-1"));
        assert_eq!(web.api_base, "https://slack.com/api");
        assert!(matches!(
            SlackWeb::new("not a url", SecretString::from("x")),
            Err(WebError::Config(_))
        ));
    }
}
