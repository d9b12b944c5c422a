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

/// A `Retry-After` header in whole seconds (the form chat platforms send); `None` when absent
/// or not a number.
pub fn retry_after(header: Option<&reqwest::header::HeaderValue>) -> Option<Duration> {
    let secs = header?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(secs))
}
