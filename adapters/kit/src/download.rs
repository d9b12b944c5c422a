//! Fetching a file a person shared, the same way on every platform: one GET, its size capped,
//! its failure classified for the chat layer's retry policy.
//!
//! Invariants: never more than `max_bytes` are read (a declared or actual larger body is
//! refused, not cut); an HTML page where a file was expected (Slack's sign-in page for a token
//! without the file scope) is refused, not passed on as the file; a 429 or 5xx is retryable, any
//! other failure is not.

use std::time::Duration;

use crate::AdapterError;
use crate::net::retry_after;

/// A fetched file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Downloaded {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The `Content-Type` it came with.
    pub content_type: Option<String>,
}

/// Sends `request` (a GET of the file) and reads at most `max_bytes` of its body. `what` names
/// the file in errors; `default_wait` is the platform's wait for a 429 without `Retry-After`.
pub async fn capped_get(
    request: reqwest::RequestBuilder,
    max_bytes: u64,
    what: &str,
    default_wait: Duration,
) -> Result<Downloaded, AdapterError> {
    let mut response = request
        .send()
        .await
        .map_err(|e| AdapterError::Transient(format!("cannot fetch {what}: {e}")))?;
    let status = response.status();
    if status.as_u16() == 429 {
        let wait = retry_after(response.headers().get(reqwest::header::RETRY_AFTER));
        return Err(AdapterError::RateLimited {
            retry_after: wait.unwrap_or(default_wait),
        });
    }
    if status.is_server_error() {
        return Err(AdapterError::Transient(format!(
            "fetching {what} answered HTTP {status}"
        )));
    }
    if !status.is_success() {
        // The platform's own reason (`{"code": 234004, "msg": "…"}`), shortened.
        let body = response.bytes().await.unwrap_or_default();
        let said: String = String::from_utf8_lossy(&body)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(300)
            .collect();
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        return Err(AdapterError::Rejected(format!(
            "fetching {what} answered HTTP {status}{said}"
        )));
    }
    let too_large = || {
        AdapterError::Rejected(format!(
            "{what} is larger than {} MB",
            max_bytes / 1024 / 1024
        ))
    };
    if response.content_length().is_some_and(|n| n > max_bytes) {
        return Err(too_large());
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| AdapterError::Transient(format!("fetching {what} was cut off: {e}")))?
    {
        if u64::try_from(bytes.len() + chunk.len()).unwrap_or(u64::MAX) > max_bytes {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Downloaded {
        bytes,
        content_type,
    })
}

/// Whether a download is an HTML page: what platforms answer, with a 200, when the app may not
/// read the file.
pub fn is_html_page(downloaded: &Downloaded) -> bool {
    let html_type = downloaded
        .content_type
        .as_deref()
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    let start: Vec<u8> = downloaded
        .bytes
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(15)
        .map(u8::to_ascii_lowercase)
        .collect();
    html_type || start.starts_with(b"<!doctype html") || start.starts_with(b"<html")
}
