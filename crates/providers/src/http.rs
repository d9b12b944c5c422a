//! What the native clients share: the HTTP client, turning an error response into a
//! [`ProviderError`], and decoding Server-Sent Events.
//!
//! Invariants: the client comes from the workspace's one builder (`workmate_net`: rustls, ring,
//! the system's roots, never a process-wide default); an error response's kind is decided by its status and the markers in
//! its body (§6.6), and `Retry-After` is kept; the SSE decoder accepts events split anywhere
//! across chunks and never panics on malformed input.

use std::time::Duration;

use crate::errors::is_context_overflow;
use crate::{ProviderError, ProviderErrorKind, ProviderSettings};

/// An HTTP client for one provider (the gateway the operator configured: a fixed destination).
pub(crate) fn client(settings: &ProviderSettings) -> Result<reqwest::Client, ProviderError> {
    let mut headers = reqwest::header::HeaderMap::new();
    for (raw_name, raw_value) in &settings.headers {
        let name = reqwest::header::HeaderName::from_bytes(raw_name.as_bytes());
        let value = reqwest::header::HeaderValue::from_str(raw_value);
        match (name, value) {
            (Ok(name), Ok(value)) => {
                headers.insert(name, value);
            }
            _ => {
                return Err(ProviderError::new(
                    ProviderErrorKind::Other,
                    format!(
                        "provider {}: header {raw_name:?} is not a valid HTTP header",
                        settings.name
                    ),
                ));
            }
        }
    }
    workmate_net::fixed_client(
        settings.connect_timeout,
        Some(settings.request_timeout),
        headers,
    )
    .map_err(|e| ProviderError::new(ProviderErrorKind::Other, e))
}

/// The error a non-success response stands for.
pub(crate) async fn error_from_response(model: &str, response: reqwest::Response) -> ProviderError {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = response.text().await.unwrap_or_default();
    let mut error = error_from_status(model, status, &body);
    error.retry_after = retry_after;
    error
}

/// The error a status and body stand for.
pub(crate) fn error_from_status(model: &str, status: u16, body: &str) -> ProviderError {
    let detail: String = body.chars().take(500).collect();
    let raw = format!("{model}: HTTP {status}: {detail}");
    let friendly = crate::errors::friendly_error(model, body);
    let kind = match status {
        429 if friendly.is_some() => ProviderErrorKind::Quota,
        429 => ProviderErrorKind::RateLimited,
        401 | 403 => ProviderErrorKind::Access,
        404 if friendly.is_some() => ProviderErrorKind::Access,
        400 | 413 if is_context_overflow(body) => ProviderErrorKind::ContextOverflow,
        400..=499 if friendly.is_some() => ProviderErrorKind::Access,
        400..=499 => ProviderErrorKind::BadRequest,
        500..=599 => ProviderErrorKind::Unavailable,
        _ => ProviderErrorKind::Other,
    };
    let kind =
        if friendly.is_some() && kind != ProviderErrorKind::Access && crate::errors::is_quota(body)
        {
            ProviderErrorKind::Quota
        } else {
            kind
        };
    ProviderError::new(kind, friendly.unwrap_or(raw))
}

/// A transport failure (no response): connection refused, timeout, TLS, a broken stream.
pub(crate) fn transport_error(model: &str, error: &reqwest::Error) -> ProviderError {
    let kind = if error.is_timeout() || error.is_connect() || error.is_request() || error.is_body()
    {
        ProviderErrorKind::Unavailable
    } else {
        ProviderErrorKind::Other
    };
    ProviderError::new(
        kind,
        format!("{model}: cannot reach the model gateway: {error}"),
    )
}

/// One Server-Sent Event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field (empty when absent).
    pub(crate) event: String,
    /// The `data:` lines joined with newlines.
    pub(crate) data: String,
}

/// Decodes a byte stream into events; feed it chunks as they arrive.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
    event: String,
    data: Vec<String>,
}

impl SseDecoder {
    /// Adds a chunk; returns the events it completed.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || !self.event.is_empty() {
                    events.push(SseEvent {
                        event: std::mem::take(&mut self.event),
                        data: self.data.join("\n"),
                    });
                    self.data.clear();
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.event = value.to_owned(),
                "data" => self.data.push(value.to_owned()),
                _ => {}
            }
        }
        events
    }

    /// The event left when the stream ends without a final blank line.
    pub(crate) fn finish(&mut self) -> Option<SseEvent> {
        let mut rest = std::mem::take(&mut self.buffer);
        rest.push(b'\n');
        let mut events = self.push(&rest);
        if !self.data.is_empty() {
            events.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: self.data.join("\n"),
            });
            self.data.clear();
        }
        events.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_are_reassembled() {
        let mut decoder = SseDecoder::default();
        let text =
            b"event: message_start\ndata: {\"a\":\r\ndata: 1}\n\n: keep-alive\n\ndata: [DONE]\n\n";
        let mut events = Vec::new();
        for chunk in text.chunks(3) {
            events.extend(decoder.push(chunk));
        }
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: "message_start".into(),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: String::new(),
                    data: "[DONE]".into()
                },
            ]
        );
        let mut unterminated = SseDecoder::default();
        assert!(unterminated.push(b"data: tail").is_empty());
        assert_eq!(unterminated.finish().map(|e| e.data), Some("tail".into()));
    }

    #[test]
    fn statuses_become_kinds() {
        assert_eq!(
            error_from_status("m", 429, "slow down").kind,
            ProviderErrorKind::RateLimited
        );
        assert_eq!(
            error_from_status("m", 503, "overloaded").kind,
            ProviderErrorKind::Unavailable
        );
        assert_eq!(
            error_from_status("m", 401, "bad key").kind,
            ProviderErrorKind::Access
        );
        assert_eq!(
            error_from_status("m", 400, "maximum context length is 8192 tokens").kind,
            ProviderErrorKind::ContextOverflow
        );
        assert_eq!(
            error_from_status("m", 429, "You exceeded your current quota").kind,
            ProviderErrorKind::Quota
        );
    }
}
