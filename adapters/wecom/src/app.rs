//! The self-built app's (自建应用) server API: the cached `access_token`, `message/send`,
//! `message/update_template_card` and the name of a person (`user/get`).
//!
//! Invariants: the token is the kit's [`AccessToken`] (one fetch at a time, replaced
//! five minutes before it expires); a call WeCom refuses for its token (40014, 42001) drops
//! that token and is made once more with a new one; every answer with a non-zero `errcode` is an
//! error naming the code, and WeCom's rate-limit codes are [`AdapterError::RateLimited`]. The
//! secret never reaches a log or an error.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use workmate_adapter::{AccessToken, AdapterError};

/// How long before its expiry a token is replaced.
const REFRESH_AHEAD: Duration = Duration::from_secs(300);
/// WeCom's codes for an invalid or expired `access_token`.
const BAD_TOKEN: [i64; 3] = [40_014, 42_001, 40_001];
/// WeCom's codes for "too many calls".
const RATE_LIMITED: [i64; 2] = [45_009, 45_033];
/// How long to wait after a rate-limit code (WeCom sends no `Retry-After`).
const RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);

/// A self-built app's API client.
pub struct AppWeb {
    http: reqwest::Client,
    base: String,
    corp_id: String,
    agent_id: String,
    secret: SecretString,
    token: AccessToken,
}

impl std::fmt::Debug for AppWeb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppWeb")
            .field("base", &self.base)
            .field("corp_id", &self.corp_id)
            .field("agent_id", &self.agent_id)
            .finish_non_exhaustive()
    }
}

impl AppWeb {
    /// The app `agent_id` of `corp_id`, with its `secret`, at `base`
    /// (`https://qyapi.weixin.qq.com`, or a fake in tests).
    pub fn new(
        http: reqwest::Client,
        base: &str,
        corp_id: &str,
        agent_id: &str,
        secret: SecretString,
    ) -> Self {
        Self {
            http,
            base: base.trim_end_matches('/').to_owned(),
            corp_id: corp_id.to_owned(),
            agent_id: agent_id.to_owned(),
            secret,
            token: AccessToken::new(REFRESH_AHEAD),
        }
    }

    /// Sends `message` (its `msgtype` and content) to `user`; WeCom's answer (with `msgid` and,
    /// for an interactive template card, `response_code`).
    pub async fn send(&self, user: &str, mut message: Value) -> Result<Value, AdapterError> {
        message["touser"] = json!(user);
        message["agentid"] = self.agent_value();
        self.call("/cgi-bin/message/send", &message).await
    }

    /// Replaces the template card a `response_code` belongs to with `card`, for `user`.
    pub async fn update_card(
        &self,
        response_code: &str,
        user: &str,
        card: &Value,
    ) -> Result<(), AdapterError> {
        let body = json!({
            "userids": [user],
            "agentid": self.agent_value(),
            "response_code": response_code,
            "template_card": card,
        });
        self.call("/cgi-bin/message/update_template_card", &body)
            .await
            .map(drop)
    }

    /// The name WeCom shows for `user` (`GET /cgi-bin/user/get`), when the app may read it
    /// (the person is in the app's visible range).
    pub async fn user_name(&self, user: &str) -> Result<Option<String>, AdapterError> {
        let token = self.token().await?;
        let got = match self.get("/cgi-bin/user/get", &token, user).await {
            Err(Refused::BadToken) => {
                self.forget(&token).await;
                let token = self.token().await?;
                self.get("/cgi-bin/user/get", &token, user).await
            }
            other => other,
        }
        .map_err(Refused::into_error)?;
        Ok(got
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned))
    }

    async fn get(&self, path: &str, token: &str, user: &str) -> Result<Value, Refused> {
        let url = self.url(path, &[("access_token", token), ("userid", user)])?;
        answer(path, self.http.get(url).send().await).await
    }

    /// The agent id as WeCom wants it: a number when it is one.
    fn agent_value(&self) -> Value {
        self.agent_id
            .parse::<i64>()
            .map_or_else(|_| json!(self.agent_id), |n| json!(n))
    }

    /// Fetches a file sent to the app (`GET /cgi-bin/media/get`), at most `max_bytes`. WeCom
    /// answers a refusal with a 200 and `{"errcode": …, "errmsg": …}` in place of the file.
    pub async fn media(
        &self,
        media_id: &str,
        max_bytes: u64,
        what: &str,
    ) -> Result<workmate_adapter::Downloaded, AdapterError> {
        let token = self.token().await?;
        let url = self
            .url(
                "/cgi-bin/media/get",
                &[("access_token", &token), ("media_id", media_id)],
            )
            .map_err(Refused::into_error)?;
        let downloaded =
            workmate_adapter::capped_get(self.http.get(url), max_bytes, what, RATE_LIMIT_WAIT)
                .await?;
        let json_answer = downloaded
            .content_type
            .as_deref()
            .is_some_and(|t| t.contains("json"))
            || downloaded.bytes.starts_with(b"{\"errcode\"");
        if json_answer && let Ok(refusal) = serde_json::from_slice::<Value>(&downloaded.bytes) {
            let code = refusal.get("errcode").and_then(Value::as_i64).unwrap_or(-1);
            let said = refusal
                .get("errmsg")
                .and_then(Value::as_str)
                .unwrap_or("no reason");
            return Err(AdapterError::Rejected(format!(
                "WeCom did not give {what}: errcode {code}: {said}"
            )));
        }
        Ok(downloaded)
    }

    async fn call(&self, path: &str, body: &Value) -> Result<Value, AdapterError> {
        let token = self.token().await?;
        match self.post(path, &token, body).await {
            Err(Refused::BadToken) => {
                tracing::info!(
                    path,
                    "WeCom refused the cached access_token; fetching a new one."
                );
                self.forget(&token).await;
                let token = self.token().await?;
                self.post(path, &token, body)
                    .await
                    .map_err(Refused::into_error)
            }
            other => other.map_err(Refused::into_error),
        }
    }

    async fn post(&self, path: &str, token: &str, body: &Value) -> Result<Value, Refused> {
        let url = self.url(path, &[("access_token", token)])?;
        let sent = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send()
            .await;
        answer(path, sent).await
    }

    async fn token(&self) -> Result<String, AdapterError> {
        self.token
            .get(|| async {
                let url = self
                    .url(
                        "/cgi-bin/gettoken",
                        &[
                            ("corpid", self.corp_id.as_str()),
                            ("corpsecret", self.secret.expose_secret()),
                        ],
                    )
                    .map_err(Refused::into_error)?;
                let sent = self.http.get(url).send().await;
                let got = answer("/cgi-bin/gettoken", sent)
                    .await
                    .map_err(|r| match r {
                        Refused::BadToken => AdapterError::Rejected(
                            "gettoken: WeCom refused the corp id and secret; check corp_id and \
                         secret in [platforms.wecom] (the self-built app's Secret)"
                                .into(),
                        ),
                        Refused::Other(e) => e,
                    })?;
                let token = got
                    .get("access_token")
                    .and_then(Value::as_str)
                    .ok_or_else(|| AdapterError::Rejected("gettoken gave no access_token".into()))?
                    .to_owned();
                let life = got
                    .get("expires_in")
                    .and_then(Value::as_u64)
                    .unwrap_or(7200);
                Ok((token, Duration::from_secs(life)))
            })
            .await
    }

    fn url(&self, path: &str, query: &[(&str, &str)]) -> Result<url::Url, Refused> {
        url::Url::parse_with_params(&format!("{}{path}", self.base), query).map_err(|e| {
            Refused::Other(AdapterError::Rejected(format!(
                "api_base {:?} does not make a URL: {e}",
                self.base
            )))
        })
    }

    /// Forgets `token`, unless another call replaced it already.
    async fn forget(&self, token: &str) {
        self.token.forget(token).await;
    }
}

/// Why a call failed.
enum Refused {
    BadToken,
    Other(AdapterError),
}

impl Refused {
    fn into_error(self) -> AdapterError {
        match self {
            Self::BadToken => AdapterError::Rejected("WeCom refused the access_token twice".into()),
            Self::Other(e) => e,
        }
    }
}

/// WeCom's JSON answer, when its `errcode` is 0.
async fn answer(
    path: &str,
    sent: Result<reqwest::Response, reqwest::Error>,
) -> Result<Value, Refused> {
    let transient = |e: String| Refused::Other(AdapterError::Transient(format!("{path}: {e}")));
    let response = sent.map_err(|e| transient(e.without_url().to_string()))?;
    let status = response.status();
    if status.as_u16() == 429 {
        return Err(Refused::Other(AdapterError::RateLimited {
            retry_after: RATE_LIMIT_WAIT,
        }));
    }
    if status.is_server_error() {
        return Err(transient(format!("HTTP {status}")));
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|e| transient(e.without_url().to_string()))?;
    let body: Value = serde_json::from_slice(&bytes)
        .map_err(|_| transient(format!("HTTP {status}, not JSON")))?;
    let code = body.get("errcode").and_then(Value::as_i64).unwrap_or(0);
    match code {
        0 => Ok(body),
        c if BAD_TOKEN.contains(&c) => Err(Refused::BadToken),
        c if RATE_LIMITED.contains(&c) => Err(Refused::Other(AdapterError::RateLimited {
            retry_after: RATE_LIMIT_WAIT,
        })),
        -1 => Err(transient("WeCom is busy (errcode -1)".into())),
        c => {
            let message = body.get("errmsg").and_then(Value::as_str).unwrap_or("");
            Err(Refused::Other(AdapterError::Rejected(format!(
                "{path}: errcode {c}: {message}"
            ))))
        }
    }
}
