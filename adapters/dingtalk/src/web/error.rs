//! How a DingTalk call failed, read from its status and body.
//!
//! DingTalk answers a `v1.0` API error with a non-2xx status and `{"code": "…", "message": "…"}`;
//! older gateways answer `{"errcode": 90018, "errmsg": "…"}`, and the per-IP ban answers
//! `{"status": 1111, "wait": 5}` (or HTML). Invariant: the classification depends on the code
//! whatever shape carries it, so a rate limit is never taken for a refusal (which the chat layer
//! would not retry) and a refusal never for a rate limit (retried for nothing).

use std::time::Duration;

use serde_json::Value;
use workmate_adapter::AdapterError;

/// The wait after a rate limit that names none: DingTalk counts QPS per second.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);
/// The per-IP ban's wait when its body names none.
const IP_BAN_WAIT: Duration = Duration::from_secs(5);
/// Codes of the per-app and per-API QPS limits (reference §4f), and the robot's "too fast".
const RATE_LIMIT_CODES: [&str; 3] = ["90018", "90002", "send.too.fast"];
/// What every spelling of the QPS limit codes contains (`QpsLimitForAppkeyAndApi`,
/// `QpsLimitForApi`, with or without the `Forbidden.AccessDenied.` prefix).
const RATE_LIMIT_MARK: &str = "QpsLimit";
/// The monthly API quota of a standard-edition organisation.
const QUOTA_CODES: [&str; 1] = ["90020"];
const QUOTA_MARK: &str = "ApiCountLimitForOrg";
/// Codes that mean "this access token is not valid" (besides HTTP 401).
const INVALID_TOKEN_CODES: [&str; 4] = ["InvalidAuthentication", "40014", "42001", "88"];

/// How a call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// The client cannot be built (a bad base URL, TLS set-up).
    #[error("DingTalk client: {0}")]
    Config(String),
    /// HTTP 429, a QPS-limit code or the per-IP ban.
    #[error("DingTalk {path}: rate limited, retry after {retry_after:?}")]
    RateLimited {
        /// The call.
        path: String,
        /// How long to wait.
        retry_after: Duration,
    },
    /// A 5xx, a timeout or a connection failure.
    #[error("DingTalk {path}: {reason}")]
    Transient {
        /// The call.
        path: String,
        /// What happened.
        reason: String,
    },
    /// The organisation used up its monthly API calls (standard edition: 5,000 a month).
    #[error(
        "DingTalk {path}: the organisation's monthly API quota is used up ({code}: {message}); \
         calls fail until next month or until the organisation upgrades its DingTalk edition"
    )]
    QuotaExhausted {
        /// The call.
        path: String,
        /// DingTalk's code.
        code: String,
        /// DingTalk's message.
        message: String,
    },
    /// DingTalk refused the call.
    #[error("DingTalk {path}: HTTP {status}, {code}: {message}")]
    Api {
        /// The call.
        path: String,
        /// The HTTP status.
        status: u16,
        /// DingTalk's code (`""` when the answer had none).
        code: String,
        /// DingTalk's message.
        message: String,
    },
}

impl WebError {
    /// DingTalk's code of a refusal.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Api { code, .. } | Self::QuotaExhausted { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Whether DingTalk refused the access token (so a new one may succeed).
    pub(crate) fn is_invalid_token(&self) -> bool {
        match self {
            Self::Api { status, code, .. } => {
                *status == 401 || INVALID_TOKEN_CODES.contains(&code.as_str())
            }
            _ => false,
        }
    }
}

impl From<WebError> for AdapterError {
    fn from(e: WebError) -> Self {
        match e {
            WebError::RateLimited { retry_after, .. } => Self::RateLimited { retry_after },
            WebError::Transient { .. } => Self::Transient(e.to_string()),
            WebError::Config(_) | WebError::QuotaExhausted { .. } | WebError::Api { .. } => {
                Self::Rejected(e.to_string())
            }
        }
    }
}

/// The answer of a call that got `status` and `answer` (its JSON, `None` when it was not JSON),
/// or how it failed. `asked` is the `Retry-After` header.
pub(super) fn check(
    path: &str,
    status: u16,
    asked: Option<Duration>,
    answer: Option<Value>,
) -> Result<Value, WebError> {
    let limited = |retry_after: Duration| WebError::RateLimited {
        path: path.to_owned(),
        retry_after,
    };
    if status == 429 {
        return Err(limited(asked.unwrap_or(DEFAULT_RETRY_AFTER)));
    }
    let Some(answer) = answer else {
        if (200..300).contains(&status) {
            return Err(api(
                path,
                status,
                String::new(),
                "the answer is not JSON".into(),
            ));
        }
        return Err(WebError::Transient {
            path: path.to_owned(),
            reason: format!("HTTP {status}, not JSON"),
        });
    };
    if answer.get("status").and_then(Value::as_i64) == Some(1111) {
        let wait = answer.get("wait").and_then(Value::as_u64);
        return Err(limited(wait.map_or(IP_BAN_WAIT, Duration::from_secs)));
    }
    let code = code_of(&answer);
    let message = message_of(&answer);
    if RATE_LIMIT_CODES.contains(&code.as_str()) || code.contains(RATE_LIMIT_MARK) {
        return Err(limited(asked.unwrap_or(DEFAULT_RETRY_AFTER)));
    }
    if QUOTA_CODES.contains(&code.as_str()) || code.contains(QUOTA_MARK) {
        tracing::error!(path, code = %code, "DingTalk: the organisation's monthly API quota is used up.");
        return Err(WebError::QuotaExhausted {
            path: path.to_owned(),
            code,
            message,
        });
    }
    if status >= 500 {
        return Err(WebError::Transient {
            path: path.to_owned(),
            reason: format!("HTTP {status}, {code}: {message}"),
        });
    }
    let failed_in_body = answer.get("success") == Some(&Value::Bool(false))
        || (!code.is_empty() && code != "0" && answer.get("errcode").is_some());
    if (200..300).contains(&status) && !failed_in_body {
        return Ok(answer);
    }
    tracing::warn!(path, status, code = %code, message = %message, "DingTalk call refused.");
    Err(api(path, status, code, message))
}

fn api(path: &str, status: u16, code: String, message: String) -> WebError {
    WebError::Api {
        path: path.to_owned(),
        status,
        code,
        message,
    }
}

/// `code` (a string) or `errcode` (a number), as text; `""` when neither is there.
fn code_of(answer: &Value) -> String {
    match answer.get("code").or_else(|| answer.get("errcode")) {
        Some(Value::String(code)) => code.clone(),
        Some(Value::Number(code)) => code.to_string(),
        _ => String::new(),
    }
}

fn message_of(answer: &Value) -> String {
    answer
        .get("message")
        .or_else(|| answer.get("errmsg"))
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn wait(result: Result<Value, WebError>) -> Option<Duration> {
        match result.err()? {
            WebError::RateLimited { retry_after, .. } => Some(retry_after),
            _ => None,
        }
    }

    #[test]
    fn every_rate_limit_shape_is_a_rate_limit() {
        let s = Duration::from_secs;
        assert_eq!(wait(check("/p", 429, Some(s(7)), None)), Some(s(7)));
        assert_eq!(wait(check("/p", 429, None, None)), Some(s(1)));
        let ip = json!({"status": 1111, "wait": 5, "message": "ip banned"});
        assert_eq!(wait(check("/p", 403, None, Some(ip))), Some(s(5)));
        for code in [
            json!({"code": "Forbidden.AccessDenied.QpsLimitForAppkeyAndApi", "message": "x"}),
            json!({"code": "QpsLimitForApi", "message": "x"}),
            json!({"errcode": 90018, "errmsg": "x"}),
            json!({"errcode": 90002, "errmsg": "x"}),
        ] {
            assert_eq!(
                wait(check("/p", 403, None, Some(code.clone()))),
                Some(s(1)),
                "{code}"
            );
        }
    }

    #[test]
    fn refusals_quota_and_server_errors_are_told_apart() {
        let refused = check(
            "/p",
            400,
            None,
            Some(json!({"code": "param.invalid", "message": "bad"})),
        );
        assert_eq!(
            refused,
            Err(WebError::Api {
                path: "/p".into(),
                status: 400,
                code: "param.invalid".into(),
                message: "bad".into()
            })
        );
        let quota = check(
            "/p",
            403,
            None,
            Some(json!({"code": "Forbidden.AccessDenied.ApiCountLimitForOrg", "message": "m"})),
        );
        let quota = AdapterError::from(quota.unwrap_err());
        assert!(
            matches!(&quota, AdapterError::Rejected(m) if m.contains("monthly API quota")),
            "{quota:?}"
        );
        assert!(matches!(
            check("/p", 502, None, None),
            Err(WebError::Transient { .. })
        ));
        let ok = json!({"success": true, "result": {}});
        assert_eq!(check("/p", 200, None, Some(ok.clone())), Ok(ok));
        assert!(
            check(
                "/p",
                200,
                None,
                Some(json!({"errcode": 310000, "errmsg": "no"}))
            )
            .is_err()
        );
        assert!(check("/p", 200, None, Some(json!({"errcode": 0, "errmsg": "ok"}))).is_ok());
        let token = check(
            "/p",
            401,
            None,
            Some(json!({"code": "InvalidAuthentication", "message": "m"})),
        );
        assert!(token.unwrap_err().is_invalid_token());
    }
}
