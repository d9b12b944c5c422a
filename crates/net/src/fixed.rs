//! Clients for destinations the operator fixed in the configuration: a chat platform's API base,
//! the model gateway. Nothing a tenant, a person, a model or a third party says may pick the
//! destination of such a client; for those, use an [`Egress`](crate::Egress).

use std::time::Duration;

use reqwest::header::HeaderMap;

/// A call that takes longer than this has failed.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// A connection not open after this has failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How workmate names itself.
pub const USER_AGENT: &str = concat!("workmate/", env!("CARGO_PKG_VERSION"));

/// A client for an operator-fixed destination: workmate's TLS, `connect_timeout`, `timeout` for
/// the whole call (`None`: none, for a stream that lasts), `headers` on every request, and
/// redirects followed as usual.
pub fn fixed_client(
    connect_timeout: Duration,
    timeout: Option<Duration>,
    headers: HeaderMap,
) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(crate::tls_config()?)
        .connect_timeout(connect_timeout)
        .user_agent(USER_AGENT)
        .default_headers(headers);
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}
