//! `[network]`: what the guarded egress may reach besides the public internet; `[mcp]`: which
//! host folders MCP servers may see; `[personas]`: which host folders personas may be installed
//! from. All are the operator's alone: nothing a tenant says widens them.
//!
//! Invariant: every `allow_private` entry parses (a host name, an address or a range) and every
//! folder root is an absolute path when the configuration loads, so a typo is a configuration
//! error naming the entry, never a rule silently ignored.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use workmate_net::NetworkPolicy;

use super::ConfigError;

/// `[network]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNetwork {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow_private: Option<Vec<String>>,
}

impl RawNetwork {
    pub(crate) fn is_empty(&self) -> bool {
        self.allow_private.is_none()
    }
}

/// `[mcp]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) folder_roots: Option<Vec<String>>,
}

impl RawMcp {
    pub(crate) fn is_empty(&self) -> bool {
        self.folder_roots.is_none()
    }
}

/// `[personas]` as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPersonas {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) folder_roots: Option<Vec<String>>,
}

impl RawPersonas {
    pub(crate) fn is_empty(&self) -> bool {
        self.folder_roots.is_none()
    }
}

/// `[personas]`.
#[derive(Clone, Debug, Default)]
pub struct PersonasConfig {
    /// `folder_roots`: the folders persona bundles (and `file://` repositories) may be
    /// installed from (default: none; https repositories only).
    pub folder_roots: Vec<PathBuf>,
}

/// `[network]`.
#[derive(Clone, Debug, Default)]
pub struct NetworkConfig {
    /// `allow_private`: host names, addresses and ranges (`10.20.0.0/16`) that connectors, MCP
    /// servers, sign-in providers and `web_fetch` may reach although they are not public
    /// (default: none). Plain http is accepted for credentials only to these.
    pub policy: Arc<NetworkPolicy>,
}

/// `[mcp]`.
#[derive(Clone, Debug, Default)]
pub struct McpConfig {
    /// `folder_roots`: the folders whose subfolders admins may give stdio MCP servers (default:
    /// none, so servers get only their own scratch folder).
    pub folder_roots: Vec<PathBuf>,
}

type Invalid<'a> = &'a dyn Fn(&'static str, &'static str, String) -> ConfigError;

pub(crate) fn validate_network(
    raw: &RawNetwork,
    invalid: Invalid<'_>,
) -> Result<NetworkConfig, ConfigError> {
    let entries = raw.allow_private.clone().unwrap_or_default();
    let policy = NetworkPolicy::allow_private(&entries)
        .map_err(|e| invalid("network", "allow_private", e.to_string()))?;
    Ok(NetworkConfig {
        policy: Arc::new(policy),
    })
}

pub(crate) fn validate_mcp(raw: &RawMcp, invalid: Invalid<'_>) -> Result<McpConfig, ConfigError> {
    Ok(McpConfig {
        folder_roots: roots("mcp", raw.folder_roots.as_deref(), invalid)?,
    })
}

pub(crate) fn validate_personas(
    raw: &RawPersonas,
    invalid: Invalid<'_>,
) -> Result<PersonasConfig, ConfigError> {
    Ok(PersonasConfig {
        folder_roots: roots("personas", raw.folder_roots.as_deref(), invalid)?,
    })
}

/// `[section] folder_roots`: absolute paths, never `/`.
fn roots(
    section: &'static str,
    raw: Option<&[String]>,
    invalid: Invalid<'_>,
) -> Result<Vec<PathBuf>, ConfigError> {
    let mut folder_roots = Vec::new();
    for root in raw.unwrap_or_default() {
        let path = PathBuf::from(root.trim());
        if !path.is_absolute() {
            return Err(invalid(
                section,
                "folder_roots",
                format!("{root:?} is not an absolute path"),
            ));
        }
        if path.parent().is_none() {
            return Err(invalid(
                section,
                "folder_roots",
                "/ would open the whole host; name the folders themselves".into(),
            ));
        }
        folder_roots.push(path);
    }
    Ok(folder_roots)
}

pub(crate) fn render_network(config: &NetworkConfig) -> RawNetwork {
    let entries = config.policy.entries();
    RawNetwork {
        allow_private: (!entries.is_empty()).then(|| entries.to_vec()),
    }
}

pub(crate) fn render_mcp(config: &McpConfig) -> RawMcp {
    RawMcp {
        folder_roots: rendered_roots(&config.folder_roots),
    }
}

pub(crate) fn render_personas(config: &PersonasConfig) -> RawPersonas {
    RawPersonas {
        folder_roots: rendered_roots(&config.folder_roots),
    }
}

fn rendered_roots(roots: &[PathBuf]) -> Option<Vec<String>> {
    (!roots.is_empty()).then(|| roots.iter().map(|p| p.display().to_string()).collect())
}
