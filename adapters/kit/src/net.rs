//! The HTTP client and TLS set-up every platform's outbound calls and WebSockets share.
//!
//! Invariant: every platform connection verifies the peer with the operating system's trust
//! store (rustls with the platform verifier, ring), has a connect timeout and an overall
//! timeout, and names itself `workmate/<version>`.

use std::sync::Arc;
use std::time::Duration;

/// A platform call that takes longer than this has failed (and is retried by the chat layer).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// A connection not open after this has failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The TLS set-up of platform connections (HTTPS and WSS).
pub fn tls_config() -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| Ok(b.with_platform_verifier()?.with_no_client_auth()))
        .map_err(|e| format!("cannot configure TLS: {e}"))
}

/// The HTTP client of a platform's API calls.
pub fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config()?)
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(CALL_TIMEOUT)
        .user_agent(concat!("workmate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

/// A `Retry-After` header in whole seconds (the form chat platforms send); `None` when absent
/// or not a number.
pub fn retry_after(header: Option<&reqwest::header::HeaderValue>) -> Option<Duration> {
    let secs = header?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(secs))
}
