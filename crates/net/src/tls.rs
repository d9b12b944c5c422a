//! workmate's TLS set-up for every outbound connection (HTTPS and WSS).
//!
//! Invariant: peers are verified against the operating system's trust store (rustls with the
//! platform verifier), with the ring provider chosen here, never a process-wide default.

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt as _;

/// The TLS client configuration; fails when the system has no usable root certificates.
pub fn tls_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| Ok(b.with_platform_verifier()?.with_no_client_auth()))
        .map_err(|e| format!("cannot configure TLS: {e}"))
}
