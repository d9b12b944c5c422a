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
    /// The file name its `Content-Disposition` gives.
    pub file_name: Option<String>,
}

impl Downloaded {
    /// Bytes with nothing known about them.
    pub fn bytes(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            ..Self::default()
        }
    }
}

/// Sends `request` (a GET of the file, to the platform's own API) and reads at most `max_bytes`
/// of its body. `what` names the file in errors; `default_wait` is the platform's wait for a 429
/// without `Retry-After`.
pub async fn capped_get(
    request: reqwest::RequestBuilder,
    max_bytes: u64,
    what: &str,
    default_wait: Duration,
) -> Result<Downloaded, AdapterError> {
    let response = request
        .send()
        .await
        .map_err(|e| AdapterError::Transient(format!("cannot fetch {what}: {e}")))?;
    capped_read(response, max_bytes, what, default_wait).await
}

/// Fetches `url`, a link the platform gave for a file, through the guarded egress (see
/// [`crate::net::link_egress`]), and reads at most `max_bytes` of it, as [`capped_get`]. A link
/// to an address the egress does not reach is refused, never fetched.
pub async fn capped_fetch(
    egress: &workmate_net::Egress,
    url: &str,
    max_bytes: u64,
    what: &str,
    default_wait: Duration,
) -> Result<Downloaded, AdapterError> {
    let url = reqwest::Url::parse(url)
        .map_err(|_| AdapterError::Rejected(format!("{what}'s link is not a web address")))?;
    let request = egress.request(reqwest::Method::GET, url);
    let response = egress.send(request).await.map_err(|e| {
        if e.is_refused() {
            AdapterError::Rejected(format!("{what} was not fetched: {e}"))
        } else {
            AdapterError::Transient(format!("cannot fetch {what}: {e}"))
        }
    })?;
    capped_read(response, max_bytes, what, default_wait).await
}

async fn capped_read(
    mut response: reqwest::Response,
    max_bytes: u64,
    what: &str,
    default_wait: Duration,
) -> Result<Downloaded, AdapterError> {
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
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header(reqwest::header::CONTENT_TYPE);
    let file_name = header(reqwest::header::CONTENT_DISPOSITION)
        .as_deref()
        .and_then(disposition_name);
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
        file_name,
    })
}

/// The file name of a `Content-Disposition` value: `filename*=UTF-8''…` (percent-encoded)
/// first, else `filename="…"`; path separators are never part of it.
pub fn disposition_name(value: &str) -> Option<String> {
    let params: Vec<(String, &str)> = value
        .split(';')
        .filter_map(|part| part.split_once('='))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim()))
        .collect();
    let extended = params
        .iter()
        .find(|(k, _)| k == "filename*")
        .and_then(|(_, v)| {
            let (_, encoded) = v.split_once("''")?;
            percent_decode(encoded)
        });
    let plain = || {
        params
            .iter()
            .find(|(k, _)| k == "filename")
            .map(|(_, v)| v.trim_matches('"').to_owned())
    };
    let name = extended.or_else(plain)?;
    let name = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    (!name.is_empty()).then_some(name)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_disposition() {
        assert_eq!(
            disposition_name("attachment; filename=\"MEDIA_ID.jpg\"").as_deref(),
            Some("MEDIA_ID.jpg")
        );
        assert_eq!(
            disposition_name(
                "attachment; filename=\"x.bin\"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf"
            )
            .as_deref(),
            Some("报告.pdf")
        );
        assert_eq!(
            disposition_name("attachment; filename=\"../../etc/passwd\"").as_deref(),
            Some("passwd")
        );
        assert_eq!(disposition_name("inline"), None);
    }
}
