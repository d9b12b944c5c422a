//! The guarded egress: the only way to send a request whose destination a tenant, a person, a
//! model or a third party's metadata can influence.
//!
//! Invariant: every hop is checked before a byte is sent to it. The first URL and each redirect
//! target go through [`NetworkPolicy::check_url`] (scheme, plain http with credentials, an
//! IP-literal host); a host name resolves only through the [`GuardedResolver`], which hands the
//! connector only addresses the policy accepts, and the connection goes to those very addresses.
//! A redirect to another origin carries no credentials: only content-neutral headers survive it.
//! Proxies are off, since a proxy would resolve names itself.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderName};
use reqwest::{Method, Request, RequestBuilder, Response, StatusCode, redirect};
use url::Url;

use crate::error::{EgressError, EgressErrorKind, origin};
use crate::fixed::{CALL_TIMEOUT, CONNECT_TIMEOUT, USER_AGENT};
use crate::policy::NetworkPolicy;
use crate::resolve::GuardedResolver;

/// How an [`Egress`] sends.
#[derive(Clone, Debug)]
pub struct EgressOptions {
    /// A connection not open after this has failed.
    pub connect_timeout: Duration,
    /// A request (one hop, body included) not done after this has failed; `None` for a stream
    /// that lasts.
    pub timeout: Option<Duration>,
    /// Redirects followed (0: a redirect is the answer).
    pub max_redirects: usize,
    /// Whether requests carry credentials, so plain http is refused unless the operator named
    /// the host.
    pub credentials: bool,
}

impl EgressOptions {
    /// Requests that carry a token or a secret: https only, 5 redirects, 10 s to connect, 30 s
    /// for the call.
    pub fn credentialed() -> Self {
        Self {
            connect_timeout: CONNECT_TIMEOUT,
            timeout: Some(CALL_TIMEOUT),
            max_redirects: 5,
            credentials: true,
        }
    }

    /// Requests that carry nothing of the sender's (a page a model asked for): http or https.
    pub fn anonymous() -> Self {
        Self {
            credentials: false,
            ..Self::credentialed()
        }
    }

    /// The same, following no redirect (a token endpoint: a redirect could carry a code or a
    /// secret elsewhere).
    #[must_use]
    pub fn without_redirects(mut self) -> Self {
        self.max_redirects = 0;
        self
    }

    /// The same, with `timeout` per request.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A client bound to the operator's [`NetworkPolicy`].
#[derive(Clone)]
pub struct Egress {
    client: reqwest::Client,
    policy: Arc<NetworkPolicy>,
    options: EgressOptions,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("policy", &self.policy)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// An egress under `policy`; fails only when TLS cannot be set up (no root certificates).
    pub fn new(policy: Arc<NetworkPolicy>, options: EgressOptions) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(crate::tls_config()?)
            .dns_resolver(GuardedResolver::new(Arc::clone(&policy)))
            // Redirects are followed by `send`, which checks each hop and strips credentials.
            .redirect(redirect::Policy::none())
            .no_proxy()
            .referer(false)
            .connect_timeout(options.connect_timeout)
            .user_agent(USER_AGENT);
        if let Some(timeout) = options.timeout {
            builder = builder.timeout(timeout);
        }
        let client = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            client,
            policy,
            options,
        })
    }

    /// The policy this egress enforces.
    pub fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    /// A request to build; it reaches the network only through [`Egress::send`].
    pub fn request(&self, method: Method, url: Url) -> RequestBuilder {
        self.client.request(method, url)
    }

    /// The client itself, for a transport that sends on its own (an MCP session), after `url`
    /// passed the checks that precede resolution. It follows no redirect; host names still
    /// resolve only to addresses the policy accepts.
    pub fn client_for(&self, url: &Url) -> Result<reqwest::Client, EgressError> {
        self.policy.check_url(url, self.options.credentials)?;
        Ok(self.client.clone())
    }

    /// Sends `request`, following redirects as the options say, each hop checked.
    pub async fn send(&self, request: RequestBuilder) -> Result<Response, EgressError> {
        self.send_following(request, self.options.max_redirects)
            .await
    }

    /// Sends `request` and follows no redirect, whatever the options say (a token endpoint: a
    /// redirect could carry a code or a secret elsewhere).
    pub async fn send_once(&self, request: RequestBuilder) -> Result<Response, EgressError> {
        self.send_following(request, 0).await
    }

    async fn send_following(
        &self,
        request: RequestBuilder,
        max_redirects: usize,
    ) -> Result<Response, EgressError> {
        let mut request = request
            .build()
            .map_err(|e| EgressError::refused(format!("the request cannot be built: {e}")))?;
        let mut hops = 0;
        loop {
            self.policy
                .check_url(request.url(), self.options.credentials)?;
            let again = (max_redirects > 0).then(|| request.try_clone()).flatten();
            let url = request.url().clone();
            let response = self
                .client
                .execute(request)
                .await
                .map_err(|e| EgressError::from_reqwest(&url, &e))?;
            let Some(target) = redirect_target(&response) else {
                return Ok(response);
            };
            let Some(next) = again else {
                // No redirects wanted, or a streamed body that cannot be sent again: the
                // redirect itself is the answer.
                return Ok(response);
            };
            hops += 1;
            if hops > max_redirects {
                return Err(EgressError::new(
                    EgressErrorKind::Refused,
                    format!(
                        "too many redirects (more than {max_redirects}); the last was from {}",
                        origin(&url),
                    ),
                ));
            }
            request = follow(next, response.status(), target);
        }
    }
}

/// Where a redirect answer points, resolved against the URL it answered.
fn redirect_target(response: &Response) -> Option<Url> {
    if !response.status().is_redirection() || response.status() == StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?.to_str().ok()?;
    response.url().join(location).ok()
}

/// The next hop of `request` to `target` after a `status` redirect: the method and body as
/// browsers change them, and only content-neutral headers on a hop to another origin.
fn follow(mut request: Request, status: StatusCode, target: Url) -> Request {
    let becomes_get = match status {
        StatusCode::SEE_OTHER => request.method() != Method::HEAD,
        StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND => request.method() == Method::POST,
        _ => false,
    };
    if becomes_get {
        *request.method_mut() = Method::GET;
        *request.body_mut() = None;
        request.headers_mut().remove(header::CONTENT_TYPE);
        request.headers_mut().remove(header::CONTENT_LENGTH);
    }
    if target.origin() != request.url().origin() {
        keep_only_neutral_headers(request.headers_mut());
    }
    *request.url_mut() = target;
    request
}

/// Drops every header that could identify or authorize the sender (`Authorization`,
/// `Cookie`, `PRIVATE-TOKEN`, `X-Api-Key`, …): everything but a short list of neutral ones.
fn keep_only_neutral_headers(headers: &mut HeaderMap) {
    const NEUTRAL: [HeaderName; 5] = [
        header::ACCEPT,
        header::ACCEPT_LANGUAGE,
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::USER_AGENT,
    ];
    let names: Vec<HeaderName> = headers.keys().cloned().collect();
    for name in names {
        if !NEUTRAL.contains(&name) {
            headers.remove(&name);
        }
    }
}
