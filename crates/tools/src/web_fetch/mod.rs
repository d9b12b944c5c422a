//! `web_fetch`: fetches one web page (http or https) as text.
//!
//! Invariant: the page is fetched through the guarded egress (`workmate_net::Egress`), so no
//! hop — the first URL or a redirect target — reaches the server itself, its private networks or
//! the metadata service unless the operator allowed the host (`[network] allow_private`).
//! Memory is bounded: the body is read up to a limit and the rest is never downloaded.

mod html;

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;
use workmate_net::{Egress, EgressOptions, NetworkPolicy};
use workmate_protocol::ToolSpec;

use crate::{Tool, ToolContext, ToolError, ToolFuture, ToolMetadata, ToolResult};

const MAX_CHARS_CAP: usize = 200_000;
/// The most bytes of a body ever kept, whatever `max_chars` asks for.
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

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

/// The host a fetch of `url` reaches first (lower case, no trailing dot), read by the same URL
/// parser the tool uses; `None` for anything it would not fetch (not http(s), no host).
pub fn fetch_host(url: &str) -> Option<String> {
    let url = url::Url::parse(url.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// `web_fetch(url, max_chars=20000)`.
#[derive(Clone, Debug, Default)]
pub struct WebFetch {
    network: Arc<NetworkPolicy>,
    /// Built on first use (it reads the system's root certificates) and shared by clones.
    egress: Arc<OnceLock<Result<Egress, String>>>,
}

impl WebFetch {
    /// A fetcher under the operator's network policy (which may open private hosts: an
    /// intranet, or a local test server).
    pub fn new(network: Arc<NetworkPolicy>) -> Self {
        Self {
            network,
            egress: Arc::default(),
        }
    }

    fn egress(&self) -> Result<&Egress, ToolError> {
        self.egress
            .get_or_init(|| {
                let options = EgressOptions::anonymous();
                Egress::new(Arc::clone(&self.network), options)
            })
            .as_ref()
            .map_err(|e| ToolError::new(format!("web_fetch is unavailable: {e}")))
    }
}

impl Tool for WebFetch {
    fn spec(&self) -> ToolSpec {
        crate::args::spec::<WebFetchArgs>("web_fetch", DESCRIPTION)
    }

    fn metadata(&self) -> Option<ToolMetadata> {
        // External: the URL itself can carry what the session read to any host, so a person
        // approves it unless the tenant allows the host (`web_fetch_allow`).
        let mut metadata = ToolMetadata::high("web", "url");
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
        // Enough bytes for `max_chars` characters of text after markup is removed.
        let max_body = max_chars.saturating_mul(8).clamp(64 * 1024, MAX_BODY_BYTES);
        let url = Url::parse(args.url.trim())
            .map_err(|e| ToolError::new(format!("invalid URL '{}': {e}", args.url)))?;
        let egress = self.egress()?;
        let request = egress.request(reqwest::Method::GET, url).header(
            reqwest::header::ACCEPT,
            "text/html, text/plain, application/json;q=0.9, */*;q=0.5",
        );
        let response = egress
            .send(request)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        let url = response.url().clone();
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = workmate_net::read_capped(response, max_body)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        let page = Page {
            status,
            content_type,
            body: body.bytes,
            body_truncated: body.truncated,
        };
        Ok(render(&url, &page, max_chars))
    }
}

/// A response, its body possibly cut at the download limit.
#[derive(Debug)]
struct Page {
    status: u16,
    content_type: String,
    body: Vec<u8>,
    body_truncated: bool,
}

fn render(url: &Url, page: &Page, max_chars: usize) -> Value {
    let content_type = page.content_type.as_str();
    let raw = String::from_utf8_lossy(&page.body);
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
    } else if page.body_truncated {
        text.push_str("\n[… truncated: the page is larger than the download limit]");
    }
    json!({
        "url": url.as_str(),
        "status": page.status,
        "content_type": content_type,
        "text": text,
    })
}
