//! The HTTP client and TLS set-up every platform's outbound calls and WebSockets share: the
//! workspace's one builder (`workmate_net`), for the platform API base the operator configured.
//!
//! Invariant: every platform connection verifies the peer with the operating system's trust
//! store, has a connect timeout and an overall timeout, and names itself `workmate/<version>`.

use std::time::Duration;

pub use workmate_net::tls_config;

/// A platform call that takes longer than this has failed (and is retried by the chat layer).
pub const CALL_TIMEOUT: Duration = workmate_net::CALL_TIMEOUT;
/// A connection not open after this has failed.
pub const CONNECT_TIMEOUT: Duration = workmate_net::CONNECT_TIMEOUT;

/// The HTTP client of a platform's API calls (to the API base the operator configured).
pub fn http_client() -> Result<reqwest::Client, String> {
    workmate_net::fixed_client(
        CONNECT_TIMEOUT,
        Some(CALL_TIMEOUT),
        reqwest::header::HeaderMap::new(),
    )
}

pub use workmate_net::{Egress, NetworkPolicy};

/// The client of links a platform hands out in its messages or answers (a WeCom robot file's
/// link or `response_url`, a DingTalk download link), whose host neither the operator nor
/// workmate chose: the guarded egress, sending no credentials, reaching public addresses, the
/// operator's `[network] allow_private` entries in `base`, and the host of the platform's
/// configured API base (operator config too, e.g. a private deployment or a test fake).
pub fn link_egress(
    base: &workmate_net::NetworkPolicy,
    api_base: &str,
) -> Result<workmate_net::Egress, String> {
    let mut entries = base.entries().to_vec();
    if let Some(host) = reqwest::Url::parse(api_base).ok().and_then(|url| {
        url.host_str()
            .map(|h| h.trim_matches(['[', ']']).to_owned())
    }) {
        entries.push(host);
    }
    let policy = workmate_net::NetworkPolicy::allow_private(&entries)
        .map_err(|e| format!("the network policy for platform links: {e}"))?;
    workmate_net::Egress::new(
        std::sync::Arc::new(policy),
        workmate_net::EgressOptions::anonymous(),
    )
}

/// POSTs `body` as JSON to `url` with `headers`: the answer's HTTP status and body, or why there
/// was none. For a call whose answer the platform judges itself (Feishu's endpoint discovery,
/// DingTalk's `connections/open`); the error names neither the body nor its secrets.
pub async fn post_json(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
    body: &impl serde::Serialize,
) -> Result<(u16, Vec<u8>), String> {
    let body = serde_json::to_vec(body).map_err(|e| format!("cannot encode the request: {e}"))?;
    let mut request = http
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.body(body).send().await;
    let response = response.map_err(|e| format!("the request failed: {e}"))?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await;
    let bytes = bytes.map_err(|e| format!("the answer is unreadable: {e}"))?;
    Ok((status, bytes.to_vec()))
}

/// A `Retry-After` header in whole seconds (the form chat platforms send); `None` when absent
/// or not a number.
pub fn retry_after(header: Option<&reqwest::header::HeaderValue>) -> Option<Duration> {
    let secs = header?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(secs))
}
