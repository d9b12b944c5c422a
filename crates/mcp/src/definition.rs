//! A registered server's definition: how to reach it and which of its tools run unasked.
//!
//! The JSON is what MCP clients already paste (`command`, `args`, `env` or `url`, `headers`, as
//! in an `mcpServers` entry), plus what a shared server needs: `folders` (the only files a stdio
//! server sees), `network`, `read_only_tools`, `timeout_seconds`.
//!
//! Invariants: a definition is checked whole before it is stored (a bad one is refused with what
//! to fix, never half-applied); it holds no secret, only `${vault:NAME}` references to the
//! tenant's vault, resolved when the server is started; a tool runs without approval only when
//! the admin listed it in `read_only_tools`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The longest a server name may be.
pub const MAX_NAME_LEN: usize = 32;
/// How long a call waits for its result unless the definition says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 120;
/// The longest `timeout_seconds` may be.
pub const MAX_TIMEOUT_S: u64 = 600;

static NAME: LazyLock<regex::Regex> = LazyLock::new(|| {
    #[allow(clippy::expect_used)]
    regex::Regex::new(r"^[a-z0-9][a-z0-9_-]{0,31}$").expect("static regex")
});

/// A folder a stdio server may see.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Folder {
    /// An absolute path on the server's host.
    pub path: PathBuf,
    /// Whether the server may write in it (default: read-only).
    #[serde(default)]
    pub writable: bool,
}

/// A server's definition, as admins write it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerDef {
    /// `stdio` or `http` (`streamable-http`, `streamable_http`, `https`, `sse` are read as `http`);
    /// by default `http` when `url` is given, else `stdio`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// stdio: the program (looked up in the sandbox's `/usr/local/bin:/usr/bin:/bin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: its environment (values may be `${vault:NAME}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// stdio: the only folders of the host it sees; the first is its working folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<Folder>,
    /// stdio: whether it may reach the network (default: only its own loopback).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub network: bool,
    /// http: the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// http: headers sent with every request (values may be `${vault:NAME}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Tools (as the server names them) that run without approval.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub read_only_tools: BTreeSet<String>,
    /// Only these tools are offered, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tools: Option<BTreeSet<String>>,
    /// These tools are never offered.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub exclude_tools: BTreeSet<String>,
    /// Seconds a call may take (default 120, at most 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    /// Whether its tools are offered (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// http: each person signs in to the server (OAuth 2.0) and calls it with their own token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthDef>,
}

/// How people sign in to a server that asks for OAuth: its client, and its authorization
/// server's endpoints (found from the server's metadata when not given).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthDef {
    /// The client id registered for workmate at the authorization server; absent, workmate
    /// registers itself where the server lets clients register (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, if it has one (may be `${vault:NAME}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The authorization endpoint; found from the server's metadata when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorize_url: Option<String>,
    /// The token endpoint; found from the server's metadata when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// The scopes asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport<'a> {
    /// A program started in the exec sandbox, spoken to over its stdin and stdout.
    Stdio {
        /// The program.
        command: &'a str,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: &'a str,
    },
}

/// Checks a server name.
pub fn check_name(name: &str) -> Result<()> {
    if NAME.is_match(name) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "MCP server name {name:?} must be 1 to {MAX_NAME_LEN} characters of a-z, 0-9, _ and -, \
             starting with a letter or digit"
        )))
    }
}

impl ServerDef {
    /// Parses a definition: a bare entry, or `{"mcpServers": {"<name>": {...}}}` holding exactly
    /// one (whose name is then returned beside it).
    pub fn parse(json: &serde_json::Value) -> Result<(Option<String>, Self)> {
        let (name, entry) = match json.get("mcpServers") {
            None => (None, json.clone()),
            Some(serde_json::Value::Object(servers)) if servers.len() == 1 => servers
                .iter()
                .next()
                .map(|(name, entry)| (Some(name.clone()), entry.clone()))
                .unwrap_or_default(),
            Some(_) => {
                return Err(Error::Invalid(
                    "an mcpServers object must hold exactly one server; add them one at a time"
                        .into(),
                ));
            }
        };
        let def: Self = serde_json::from_value(entry)
            .map_err(|e| Error::Invalid(format!("invalid MCP server definition: {e}")))?;
        def.check()?;
        Ok((name, def))
    }

    /// How the server is reached; the definition must have been checked.
    pub fn transport(&self) -> Result<Transport<'_>> {
        let kind = self.kind.as_deref().map(str::to_ascii_lowercase);
        let http = match kind.as_deref() {
            None => self.url.is_some(),
            Some("stdio") => false,
            Some("http" | "https" | "sse" | "streamable-http" | "streamable_http") => true,
            Some(other) => {
                return Err(Error::Invalid(format!(
                    "unknown MCP transport type {other:?}: use \"stdio\" or \"http\""
                )));
            }
        };
        if http {
            let url = self
                .url
                .as_deref()
                .ok_or_else(|| Error::Invalid("an http MCP server needs a \"url\"".into()))?;
            Ok(Transport::Http { url })
        } else {
            let command = self.command.as_deref().ok_or_else(|| {
                Error::Invalid(
                    "a stdio MCP server needs a \"command\" (or give a \"url\" for streamable HTTP)"
                        .into(),
                )
            })?;
            Ok(Transport::Stdio { command })
        }
    }

    /// Everything that can be checked without starting the server.
    pub fn check(&self) -> Result<()> {
        match self.transport()? {
            Transport::Stdio { command } => {
                if self.oauth.is_some() {
                    return Err(Error::Invalid("only an http server takes \"oauth\"".into()));
                }
                if command.trim().is_empty() {
                    return Err(Error::Invalid("\"command\" must not be empty".into()));
                }
                if self.url.is_some() || !self.headers.is_empty() {
                    return Err(Error::Invalid(
                        "a stdio server takes no \"url\" or \"headers\"".into(),
                    ));
                }
                for folder in &self.folders {
                    if !folder.path.is_absolute() {
                        return Err(Error::Invalid(format!(
                            "folder {} must be an absolute path",
                            folder.path.display()
                        )));
                    }
                }
                for name in self.env.keys() {
                    if name.is_empty() || name.contains(['=', '\0']) {
                        return Err(Error::Invalid(format!(
                            "environment variable name {name:?} is not valid"
                        )));
                    }
                }
            }
            Transport::Http { url } => {
                let parsed = url::Url::parse(url)
                    .map_err(|e| Error::Invalid(format!("\"url\" {url:?} is not a URL: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(Error::Invalid(format!(
                        "\"url\" must be http or https, not {}",
                        parsed.scheme()
                    )));
                }
                if self.command.is_some()
                    || !self.args.is_empty()
                    || !self.env.is_empty()
                    || !self.folders.is_empty()
                {
                    return Err(Error::Invalid(
                        "an http server takes no \"command\", \"args\", \"env\" or \"folders\""
                            .into(),
                    ));
                }
                if let Some(oauth) = &self.oauth {
                    if oauth
                        .client_id
                        .as_deref()
                        .is_some_and(|id| id.trim().is_empty())
                    {
                        return Err(Error::Invalid(
                            "\"client_id\" is empty; leave it out to let workmate register itself"
                                .into(),
                        ));
                    }
                    for url in [&oauth.authorize_url, &oauth.token_url]
                        .into_iter()
                        .flatten()
                    {
                        url::Url::parse(url).map_err(|e| {
                            Error::Invalid(format!("oauth endpoint {url:?} is not a URL: {e}"))
                        })?;
                    }
                    if self
                        .headers
                        .keys()
                        .any(|h| h.eq_ignore_ascii_case("authorization"))
                    {
                        return Err(Error::Invalid(
                            "a server people sign in to takes no Authorization header".into(),
                        ));
                    }
                }
                for name in self.headers.keys() {
                    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        return Err(Error::Invalid(format!(
                            "header name {name:?} is not a valid HTTP header"
                        )));
                    }
                }
            }
        }
        if let Some(t) = self.timeout_seconds
            && !(1..=MAX_TIMEOUT_S).contains(&t)
        {
            return Err(Error::Invalid(format!(
                "\"timeout_seconds\" must be 1 to {MAX_TIMEOUT_S}, not {t}"
            )));
        }
        Ok(())
    }

    /// How long a call may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_S))
    }

    /// Whether its tools are offered.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// The definition as admins see it: names of variables and headers, never their values
    /// (`***`), and no client secret.
    #[must_use]
    pub fn redacted(&self) -> Self {
        let mut shown = self.clone();
        for value in shown.env.values_mut().chain(shown.headers.values_mut()) {
            *value = "***".into();
        }
        if let Some(secret) = shown.oauth.as_mut().and_then(|o| o.client_secret.as_mut()) {
            *secret = "***".into();
        }
        shown
    }

    /// The definition as members see it: no environment, headers or client secret at all.
    #[must_use]
    pub fn for_members(&self) -> Self {
        let mut shown = self.clone();
        shown.env.clear();
        shown.headers.clear();
        if let Some(oauth) = shown.oauth.as_mut() {
            oauth.client_secret = None;
        }
        shown
    }

    /// Whether the server's tool `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        !self.exclude_tools.contains(tool)
            && self
                .include_tools
                .as_ref()
                .is_none_or(|only| only.contains(tool))
    }
}

/// The vault names a value refers to as `${vault:NAME}`, in order.
pub(crate) fn secret_refs(value: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${vault:") {
        let after = &rest[start + "${vault:".len()..];
        let Some(end) = after.find('}') else { break };
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    names
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pasted_entry_and_a_bare_one_parse_alike() {
        let pasted = json!({"mcpServers": {"files": {"command": "node", "args": ["x.js"]}}});
        let (name, def) = ServerDef::parse(&pasted).unwrap();
        assert_eq!(name.as_deref(), Some("files"));
        assert_eq!(
            def.transport().unwrap(),
            Transport::Stdio { command: "node" }
        );
        let (name, def) = ServerDef::parse(&json!({"url": "https://mcp.example.com/mcp"})).unwrap();
        assert_eq!(name, None);
        assert_eq!(
            def.transport().unwrap(),
            Transport::Http {
                url: "https://mcp.example.com/mcp"
            }
        );
    }

    #[test]
    fn bad_definitions_say_what_to_fix() {
        let bad = [
            (json!({}), "needs a \"command\""),
            (json!({"command": "node", "url": "https://x"}), "takes no"),
            (json!({"url": "ftp://x"}), "http or https"),
            (
                json!({"command": "node", "folders": [{"path": "rel"}]}),
                "absolute",
            ),
            (json!({"command": "node", "timeout_seconds": 0}), "1 to 600"),
            (json!({"command": "node", "colour": "red"}), "unknown field"),
            (
                json!({"type": "ws", "url": "https://x"}),
                "unknown MCP transport",
            ),
            (json!({"mcpServers": {"a": {}, "b": {}}}), "exactly one"),
        ];
        for (json, expected) in bad {
            let error = ServerDef::parse(&json).unwrap_err().to_string();
            assert!(error.contains(expected), "{json}: {error}");
        }
        assert!(check_name("github-internal").is_ok());
        assert!(check_name("GitHub").is_err());
        assert!(check_name(&"a".repeat(33)).is_err());
    }

    #[test]
    fn tool_filters_and_secret_references() {
        let def: ServerDef = serde_json::from_value(json!({
            "command": "x", "include_tools": ["a", "b"], "exclude_tools": ["b"]
        }))
        .unwrap();
        assert!(def.offers("a") && !def.offers("b") && !def.offers("c"));
        assert_eq!(
            secret_refs("Bearer ${vault:mcp.token} and ${vault:other}"),
            ["mcp.token", "other"]
        );
        assert!(secret_refs("plain").is_empty());
    }
}
