//! `web_fetch`: fetches one web page as text.
//!
//! Invariant: every hop (the first URL and each redirect target) is vetted before any byte is
//! sent — http(s) only, its host resolved once and every resolved address checked by
//! [`guard::forbidden_reason`] unless the host is allow-listed — and the connection goes to the
//! vetted address itself, so DNS rebinding between check and connect cannot reach a forbidden one.

pub mod guard;
mod html;
mod http;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use url::{Host, Position, Url};
use workmate_protocol::ToolSpec;

use crate::{Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult};

const MAX_REDIRECTS: usize = 5;
const MAX_CHARS_CAP: usize = 200_000;
const HOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchArgs {
    /// The http(s) URL to fetch.
    url: String,
    /// How many characters of text to return at most (default 20000).
    #[serde(default = "twenty_thousand")]
    max_chars: usize,
}

fn twenty_thousand() -> usize {
    20_000
}

const DESCRIPTION: &str = "Fetch a web page (http or https) and return its text (HTML is \
converted to plain text). Private, loopback and cloud-metadata addresses are refused. Follows up \
to 5 redirects.";

/// `web_fetch(url, max_chars=20000)`.
#[derive(Clone, Debug, Default)]
pub struct WebFetch {
    allow_hosts: Arc<[String]>,
}

impl WebFetch {
    /// A fetcher that may also reach the named hosts even when they resolve to private addresses
    /// (an operator's intranet, or a local test server).
    pub fn new(allow_hosts: Vec<String>) -> Self {
        Self {
            allow_hosts: allow_hosts.into(),
        }
    }
}

impl Tool for WebFetch {
    fn spec(&self) -> ToolSpec {
        crate::args::spec::<WebFetchArgs>("web_fetch", DESCRIPTION)
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        let mut metadata = ToolMetadata::read("web");
        metadata.target_arg = Some("url".to_owned());
        metadata.idempotent = true;
        Some(metadata)
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let args = crate::args::parse::<WebFetchArgs>("web_fetch", arguments)?;
            tokio::select! {
                result = self.fetch(args) => result,
                () = ctx.cancel.cancelled() => Err(ToolError::new("interrupted by user")),
            }
        })
    }
}

impl WebFetch {
    async fn fetch(&self, args: WebFetchArgs) -> ToolResult {
        let max_chars = args.max_chars.clamp(1, MAX_CHARS_CAP);
        let mut url = Url::parse(args.url.trim())
            .map_err(|e| ToolError::new(format!("invalid URL '{}': {e}", args.url)))?;
        for hop in 0..=MAX_REDIRECTS {
            let addr = self.vet(&url).await?;
            if url.scheme() == "https" {
                return Err(ToolError::new(format!(
                    "cannot fetch {url}: https fetching is not available in this build"
                )));
            }
            let host = match url.port() {
                Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
                None => url.host_str().unwrap_or_default().to_owned(),
            };
            let target = &url[Position::BeforePath..Position::AfterQuery];
            let target = if target.is_empty() { "/" } else { target };
            // Enough bytes for `max_chars` characters of text after markup is removed.
            let max_body = max_chars.saturating_mul(8).max(64 * 1024);
            let response =
                tokio::time::timeout(HOP_TIMEOUT, http::get(addr, &host, target, max_body))
                    .await
                    .map_err(|_| ToolError::new(format!("fetching {url} timed out")))?
                    .map_err(|e| ToolError::new(format!("fetching {url} failed: {e}")))?;
            if matches!(response.status, 301 | 302 | 303 | 307 | 308)
                && let Some(location) = response.header("location")
            {
                if hop == MAX_REDIRECTS {
                    return Err(ToolError::new(format!(
                        "too many redirects (more than {MAX_REDIRECTS}); last was to {location}"
                    )));
                }
                url = url.join(location).map_err(|e| {
                    ToolError::new(format!(
                        "{url} redirected to an invalid URL '{location}': {e}"
                    ))
                })?;
                continue;
            }
            return Ok(render(&url, &response, max_chars));
        }
        Err(ToolError::new("too many redirects"))
    }

    /// The address to connect to for `url`, after every check.
    async fn vet(&self, url: &Url) -> Result<SocketAddr, ToolError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::new(format!(
                "cannot fetch {url}: only http and https URLs can be fetched"
            )));
        }
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return Err(ToolError::new(format!(
                "cannot fetch {url}: the URL has no host"
            )));
        };
        let addrs: Vec<SocketAddr> = match host {
            Host::Ipv4(ip) => vec![SocketAddr::new(ip.into(), port)],
            Host::Ipv6(ip) => vec![SocketAddr::new(ip.into(), port)],
            Host::Domain(name) => tokio::net::lookup_host((name, port))
                .await
                .map_err(|e| ToolError::new(format!("cannot resolve {name}: {e}")))?
                .collect(),
        };
        let host_text = url.host_str().unwrap_or_default();
        if !guard::host_allowed(&self.allow_hosts, host_text) {
            // One forbidden address is enough to refuse: a name that resolves both ways is a
            // rebinding attempt or a misconfiguration.
            for addr in &addrs {
                if let Some(reason) = guard::forbidden_reason(addr.ip()) {
                    return Err(ToolError::new(format!(
                        "refusing to fetch {url}: {host_text} is {reason} ({})",
                        addr.ip()
                    )));
                }
            }
        }
        addrs
            .first()
            .copied()
            .ok_or_else(|| ToolError::new(format!("cannot resolve {host_text}: no addresses")))
    }
}

fn render(url: &Url, response: &http::Response, max_chars: usize) -> Value {
    let content_type = response
        .header("content-type")
        .unwrap_or_default()
        .to_owned();
    let raw = String::from_utf8_lossy(&response.body);
    let text = if content_type.to_ascii_lowercase().contains("html")
        || (content_type.is_empty() && raw.trim_start().starts_with('<'))
    {
        html::to_text(&raw)
    } else {
        raw.into_owned()
    };
    let total = text.chars().count();
    let mut text: String = text.chars().take(max_chars).collect();
    if total > max_chars {
        text.push_str(&format!(
            "\n[… truncated: showing the first {max_chars} of {total} characters]"
        ));
    } else if response.body_truncated {
        text.push_str("\n[… truncated: the page is larger than the download limit]");
    }
    json!({
        "url": url.as_str(),
        "status": response.status,
        "content_type": content_type,
        "text": text,
    })
}
