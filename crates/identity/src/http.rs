//! `openidconnect`'s asynchronous HTTP client trait over the guarded egress, so the crate pulls
//! no second reqwest and the provider's metadata cannot point it at the host.
//!
//! Invariant: every request the OpenID library makes goes through the injected egress (its
//! address guard, timeouts and TLS settings) and follows no redirect; answers are capped and
//! passed back otherwise unchanged.

use std::future::Future;
use std::pin::Pin;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

/// A failed HTTP exchange with the provider.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpError(String);

/// The most of a provider's answer read (metadata and key sets are a few KiB).
const MAX_ANSWER: usize = 1 << 20;

/// The egress, as `openidconnect` wants it.
#[derive(Clone, Debug)]
pub(crate) struct Http(pub(crate) workmate_net::Egress);

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let url = url::Url::parse(&parts.uri.to_string())
                .map_err(|e| HttpError(format!("{}: {e}", parts.uri)))?;
            let request = self
                .0
                .request(parts.method, url)
                .headers(parts.headers)
                .body(body);
            let response = self
                .0
                .send_once(request)
                .await
                .map_err(|e| HttpError(e.to_string()))?;
            let mut builder = openidconnect::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let body = workmate_net::read_within(response, MAX_ANSWER)
                .await
                .map_err(|e| HttpError(e.to_string()))?;
            builder.body(body).map_err(|e| HttpError(e.to_string()))
        })
    }
}
