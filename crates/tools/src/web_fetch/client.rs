//! The HTTP(S) client behind `web_fetch`.
//!
//! Invariant: the client reaches nothing the guard forbids. Host names resolve only through
//! [`GuardedResolver`]; IP-literal hosts, which the client connects to without resolving, are
//! vetted by [`guard::check_url`] before the first request and on every redirect hop; proxies are
//! off (a proxy would resolve names itself). TLS runs on rustls with the ring provider chosen
//! here and the system's root certificates, so no process-wide provider is involved.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use reqwest::{Client, redirect};
use rustls_platform_verifier::BuilderVerifierExt;

use super::guard::{self, GuardError};
use super::resolve::GuardedResolver;

/// Redirects followed before giving up.
pub(super) const MAX_REDIRECTS: usize = 5;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// For the whole fetch: every hop, and the body.
const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);

/// A client for `web_fetch`, or why none can be built (e.g. no root certificates on the system).
pub(super) fn build(allow_hosts: Arc<[String]>) -> Result<Client, String> {
    let mut headers = HeaderMap::new();
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("text/html, text/plain, application/json;q=0.9, */*;q=0.5"),
    );
    Client::builder()
        .tls_backend_preconfigured(tls_config()?)
        .dns_resolver(GuardedResolver::new(Arc::clone(&allow_hosts)))
        .redirect(redirect_policy(allow_hosts))
        .no_proxy()
        // Every request resolves and connects afresh, so each one goes through the resolver.
        .pool_max_idle_per_host(0)
        .referer(false)
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(TOTAL_TIMEOUT)
        .user_agent(concat!("workmate/", env!("CARGO_PKG_VERSION")))
        .default_headers(headers)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

fn tls_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot configure TLS: {e}"))?
        // Roots come from the system store (/etc/ssl/certs, or SSL_CERT_FILE / SSL_CERT_DIR).
        .with_platform_verifier()
        .map_err(|e| format!("cannot load the system's TLS root certificates: {e}"))?
        .with_no_client_auth();
    // The client speaks HTTP/1.1 only (no `http2` feature); say so in ALPN.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Follows at most [`MAX_REDIRECTS`] hops, each to an http(s) URL whose host, when an IP literal,
/// is not forbidden; a host name is vetted by the resolver when the hop connects.
fn redirect_policy(allow_hosts: Arc<[String]>) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        // `previous` starts with the original URL, so it holds one entry per hop taken so far.
        if attempt.previous().len() > MAX_REDIRECTS {
            let error = GuardError(format!(
                "too many redirects (more than {MAX_REDIRECTS}); the last was to {}",
                attempt.url()
            ));
            return attempt.error(error);
        }
        match guard::check_url(&allow_hosts, attempt.url()) {
            Ok(()) => attempt.follow(),
            Err(error) => attempt.error(error),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_with_the_ring_provider_and_system_roots() {
        // Fails (rather than panics) if reqwest did not recognise the preconfigured rustls config,
        // e.g. after a rustls version split, or if the system has no root certificates.
        build(Arc::from(Vec::new())).unwrap();
        let config = tls_config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
