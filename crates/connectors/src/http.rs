//! The HTTP calls connectors make: one guarded egress (a connector's base URL is the tenant's
//! to set, so it may not point at the host or its networks unless the operator allowed them),
//! bounded bodies, and the other system's errors turned into messages that say what to do.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use secrecy::SecretString;
use serde_json::Value;

/// The most of a response body read.
const MAX_BODY: usize = 4 << 20;

/// How a request authenticates.
#[derive(Debug)]
pub enum Auth<'a> {
    /// No authentication (a token endpoint that takes the secrets in its body).
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(&'a str),
    /// `Authorization: Basic base64(user:password)`.
    Basic(&'a str, &'a str),
    /// A header of the system's own (`PRIVATE-TOKEN: …`).
    Header(&'static str, &'a str),
}

/// One system's API as one caller: where it is, how its requests authenticate, which headers go
/// with each.
#[derive(Debug)]
pub struct Api<'a> {
    /// The client.
    pub http: &'a Http,
    /// The system's name, for errors (`GitHub`).
    pub system: &'static str,
    /// The API's base URL, without a trailing `/`.
    pub base: &'a str,
    /// How requests authenticate.
    pub auth: Auth<'a>,
    /// Headers sent with every request.
    pub headers: &'a [(&'a str, &'a str)],
}

impl Api<'_> {
    /// `method` on `base` + `path` (which starts with `/`), with a JSON body if any: the JSON
    /// answer, or the error the model sees.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, workmate_tools::ToolError> {
        let url = format!("{}{path}", self.base);
        self.http
            .json(
                self.system,
                method,
                &url,
                &self.auth,
                self.headers,
                body.as_ref(),
            )
            .await
            .map_err(workmate_tools::ToolError::new)
    }
}

/// An access token a system handed out, and how long it lives.
pub(crate) struct Issued {
    token: String,
    life: Duration,
}

impl Issued {
    /// `token`, valid for `lifetime_s` seconds.
    pub(crate) fn new(token: &str, lifetime_s: u64) -> Self {
        Self {
            token: token.to_owned(),
            life: Duration::from_secs(lifetime_s),
        }
    }
}

/// A token is replaced this long before it expires, so it never expires in flight.
const REFRESH_AHEAD: Duration = Duration::from_secs(60);

/// The connectors' HTTP client, and the short-lived access tokens it has been handed (an app's
/// tenant token, a refreshed OAuth token), kept until shortly before they expire.
#[derive(Clone)]
pub struct Http {
    egress: workmate_net::Egress,
    tokens: Arc<workmate_net::TokenCache>,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http").finish_non_exhaustive()
    }
}

impl Http {
    /// A client under the operator's network policy: https only for credentials (unless the
    /// operator named the host), a 30 s deadline per request.
    pub fn new(network: Arc<workmate_net::NetworkPolicy>) -> Result<Self, String> {
        let egress =
            workmate_net::Egress::new(network, workmate_net::EgressOptions::credentialed())?;
        Ok(Self {
            egress,
            tokens: Arc::new(workmate_net::TokenCache::new(REFRESH_AHEAD)),
        })
    }

    /// The access token issued for `credential` (the secrets it is exchanged for, which only
    /// a digest of is kept), fetched with `issue` when there is none still valid.
    pub(crate) async fn access_token<F>(
        &self,
        credential: &[&str],
        issue: impl FnOnce() -> F,
    ) -> Result<SecretString, workmate_tools::ToolError>
    where
        F: Future<Output = Result<Issued, workmate_tools::ToolError>>,
    {
        let token = self
            .tokens
            .of(credential)
            .get(|| async {
                let issued = issue().await?;
                Ok::<_, workmate_tools::ToolError>((issued.token, issued.life))
            })
            .await?;
        Ok(SecretString::from(token))
    }

    /// The egress (for token requests made through the identity layer).
    pub(crate) fn egress(&self) -> &workmate_net::Egress {
        &self.egress
    }

    /// Sends one request with a JSON body (if any) and returns the JSON answer (`null` for an
    /// empty one). `system` names the other side in errors.
    pub async fn json(
        &self,
        system: &str,
        method: Method,
        url: &str,
        auth: &Auth<'_>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Value, String> {
        let url = url::Url::parse(url).map_err(|e| format!("{system}: {url} is not a URL: {e}"))?;
        let mut request = self
            .egress
            .request(method, url)
            .header("Accept", "application/json");
        request = match auth {
            Auth::None => request,
            Auth::Bearer(token) => request.bearer_auth(token),
            Auth::Basic(user, password) => request.basic_auth(user, Some(password)),
            Auth::Header(name, value) => request.header(*name, *value),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        self.answer(system, request).await
    }

    /// Sends `request` and reads its JSON answer (`null` for an empty one), or the error that
    /// says what went wrong.
    async fn answer(
        &self,
        system: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<Value, String> {
        let response = self
            .egress
            .send(request)
            .await
            .map_err(|e| format!("{system} cannot be reached: {e}"))?;
        let status = response.status();
        let body = workmate_net::read_within(response, MAX_BODY)
            .await
            .map_err(|e| format!("{system}'s answer: {e}"))?;
        parse_answer(system, status, &body)
    }
}

/// A JSON answer (`null` for an empty one), or the error its status stands for.
fn parse_answer(system: &str, status: reqwest::StatusCode, bytes: &[u8]) -> Result<Value, String> {
    if !status.is_success() {
        return Err(status_error(system, status.as_u16(), bytes));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| format!("{system} answered with something other than JSON: {e}"))
}

fn status_error(system: &str, status: u16, body: &[u8]) -> String {
    let detail: String = String::from_utf8_lossy(body).chars().take(300).collect();
    let what = match status {
        401 => {
            "did not accept the credentials (expired or revoked?): connect it again with /workmate connectors"
        }
        403 => "refused: the account lacks the permission or scope for this",
        404 => "found no such thing (or the account cannot see it)",
        409 | 422 => "refused the request as invalid",
        429 => "is rate-limiting: try again in a minute",
        500..=599 => "failed on its side: try again later",
        _ => "refused the request",
    };
    format!("{system} {what} (HTTP {status}): {}", detail.trim())
}
