//! The configuration keys workmate knows, and where a value came from.
//!
//! Invariant: [`KNOWN_KEYS`] lists exactly the fields of the file/env/flag schema (a unit test
//! compares it with the serde structs), so a key is either known here or rejected by name.

use std::fmt;
use std::path::PathBuf;

/// The TOML type a key's value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string.
    Str,
    /// A non-negative integer.
    Int,
    /// A list of strings (in the environment: comma-separated).
    StrList,
    /// `true` or `false`.
    Bool,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Str => "a string",
            Self::Int => "an integer",
            Self::StrList => "a list of strings",
            Self::Bool => "a boolean (true or false)",
        }
    }
}

/// One settable key: `[section] key`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key {
    pub(crate) section: &'static str,
    pub(crate) key: &'static str,
    pub(crate) kind: Kind,
    /// The command-line flag that sets it, if any.
    pub(crate) flag: Option<&'static str>,
}

impl Key {
    /// `[section] key` of `kind`, set in the file or the environment.
    const fn new(section: &'static str, key: &'static str, kind: Kind) -> Self {
        Self {
            section,
            key,
            kind,
            flag: None,
        }
    }

    /// `[section] key` of `kind`, also set by the command-line flag `flag`.
    const fn flagged(
        section: &'static str,
        key: &'static str,
        kind: Kind,
        flag: &'static str,
    ) -> Self {
        Self {
            section,
            key,
            kind,
            flag: Some(flag),
        }
    }

    /// The environment variable that sets this key.
    pub(crate) fn env_var(&self) -> String {
        format!(
            "WORKMATE__{}__{}",
            self.section.replace('.', "__").to_uppercase(),
            self.key.to_uppercase()
        )
    }

    /// Every way an operator can set this key, for error messages.
    pub(crate) fn how_to_set(&self) -> String {
        let flag = self.flag.map(|f| format!(" / {f}")).unwrap_or_default();
        format!("[{}] {}{flag} / {}", self.section, self.key, self.env_var())
    }
}

/// Every key of the configuration.
pub(crate) const KNOWN_KEYS: &[Key] = &[
    Key::flagged("server", "listen", Kind::Str, "--listen"),
    Key::flagged("server", "data_dir", Kind::Str, "--data-dir"),
    Key::new("server", "shutdown_grace_ms", Kind::Int),
    Key::new("server", "request_timeout_ms", Kind::Int),
    Key::new("server", "header_read_timeout_ms", Kind::Int),
    Key::new("server", "max_body_bytes", Kind::Int),
    Key::new("server", "max_connections", Kind::Int),
    Key::new("server", "max_connections_per_client", Kind::Int),
    Key::new("server", "idle_timeout_ms", Kind::Int),
    Key::new("server", "max_streams_per_client", Kind::Int),
    // `[server.surface_tokens]`: `*` stands for any surface name.
    Key::new("server.surface_tokens", "*", Kind::Str),
    // `[server.surface_grants]`: whom each surface may act for.
    Key::new("server.surface_grants", "*", Kind::StrList),
    Key::flagged("database", "url", Kind::Str, "--database-url"),
    Key::new("database", "max_connections", Kind::Int),
    Key::new("server", "admin_token", Kind::Str),
    Key::new("server", "replica_id", Kind::Str),
    Key::new("engine", "max_iterations", Kind::Int),
    Key::new("engine", "default_model", Kind::Str),
    Key::new("engine", "recover_within_seconds", Kind::Int),
    Key::new("engine", "idle_session_seconds", Kind::Int),
    Key::new("scheduler", "tick_seconds", Kind::Int),
    // `[providers.NAME]`: `*` stands for any provider name (and, in `headers`, any header).
    Key::new("providers.*", "kind", Kind::Str),
    Key::new("providers.*", "base_url", Kind::Str),
    Key::new("providers.*", "api_key", Kind::Str),
    Key::new("providers.*", "api_key_env", Kind::Str),
    Key::new("providers.*", "timeout_ms", Kind::Int),
    Key::new("providers.*", "models", Kind::StrList),
    Key::new("providers.*", "vision_models", Kind::StrList),
    Key::new("providers.*", "pdf_models", Kind::StrList),
    Key::new("providers.*", "context_window", Kind::Int),
    Key::new("providers.*", "script", Kind::Str),
    Key::new("providers.*.headers", "*", Kind::Str),
    // `[platforms.slack]`: the Slack app (HTTP mode or Socket Mode).
    Key::new("platforms.slack", "signing_secret", Kind::Str),
    Key::new("platforms.slack", "bot_token", Kind::Str),
    Key::new("platforms.slack", "app_token", Kind::Str),
    Key::new("platforms.slack", "api_base", Kind::Str),
    Key::new("platforms.slack", "mode", Kind::Str),
    Key::new("platforms.slack", "admins", Kind::StrList),
    // `[platforms.feishu]`: the Feishu / Lark app (webhook or long connection).
    Key::new("platforms.feishu", "app_id", Kind::Str),
    Key::new("platforms.feishu", "app_secret", Kind::Str),
    Key::new("platforms.feishu", "encrypt_key", Kind::Str),
    Key::new("platforms.feishu", "verification_token", Kind::Str),
    Key::new("platforms.feishu", "mode", Kind::Str),
    Key::new("platforms.feishu", "api_base", Kind::Str),
    Key::new("platforms.feishu", "admins", Kind::StrList),
    // `[platforms.wecom]`: WeCom's smart robot (callback or long connection) and self-built app.
    Key::new("platforms.wecom", "corp_id", Kind::Str),
    Key::new("platforms.wecom", "token", Kind::Str),
    Key::new("platforms.wecom", "encoding_aes_key", Kind::Str),
    Key::new("platforms.wecom", "bot_id", Kind::Str),
    Key::new("platforms.wecom", "agent_id", Kind::Str),
    Key::new("platforms.wecom", "secret", Kind::Str),
    Key::new("platforms.wecom", "mode", Kind::Str),
    Key::new("platforms.wecom", "api_base", Kind::Str),
    Key::new("platforms.wecom", "admins", Kind::StrList),
    // `[platforms.dingtalk]`: a DingTalk app's robot (Stream connection or HTTP callbacks).
    Key::new("platforms.dingtalk", "client_id", Kind::Str),
    Key::new("platforms.dingtalk", "client_secret", Kind::Str),
    Key::new("platforms.dingtalk", "card_template_id", Kind::Str),
    Key::new("platforms.dingtalk", "answer_template_id", Kind::Str),
    Key::new("platforms.dingtalk", "mode", Kind::Str),
    Key::new("platforms.dingtalk", "api_base", Kind::Str),
    Key::new("platforms.dingtalk", "gateway_base", Kind::Str),
    Key::new("platforms.dingtalk", "callback_route_key", Kind::Str),
    Key::new("platforms.dingtalk", "token", Kind::Str),
    Key::new("platforms.dingtalk", "encoding_aes_key", Kind::Str),
    Key::new("platforms.dingtalk", "admins", Kind::StrList),
    Key::new("platforms.dingtalk", "corp_id", Kind::Str),
    Key::new("tools", "workspaces_dir", Kind::Str),
    Key::new("tools", "shell_sandbox", Kind::Str),
    // `[tracing]`: where spans are exported.
    Key::new("tracing", "otlp_endpoint", Kind::Str),
    Key::new("tracing", "service_name", Kind::Str),
    Key::new("coordinator", "redis_url", Kind::Str),
    Key::new("coordinator", "key_prefix", Kind::Str),
    Key::new("coordinator", "session_lease_ms", Kind::Int),
    Key::new("coordinator", "connection_lease_ms", Kind::Int),
    Key::new("coordinator", "deliveries_per_minute", Kind::Int),
    // `[dlp]`: the operator's own redaction rules.
    Key::new("dlp", "fields", Kind::StrList),
    Key::new("dlp", "patterns", Kind::StrList),
    // `[audit.*]`: the sinks the audit trail is streamed to.
    Key::new("audit.redis", "url", Kind::Str),
    Key::new("audit.redis", "stream_prefix", Kind::Str),
    Key::new("audit.nats", "url", Kind::Str),
    Key::new("audit.nats", "subject_prefix", Kind::Str),
    Key::new("audit.nats", "stream", Kind::Str),
    // `[vault]`: the credential vault's master keys (the key itself may instead be in the
    // environment variable WORKMATE_VAULT_KEY, which is not a configuration key).
    Key::new("vault", "key_file", Kind::Str),
    Key::new("vault", "previous_key_files", Kind::StrList),
    // `[auth]`: single sign-on and the break-glass admin token.
    Key::new("auth", "break_glass_admin_token", Kind::Bool),
    Key::new("auth.oidc", "issuer", Kind::Str),
    Key::new("auth.oidc", "client_id", Kind::Str),
    Key::new("auth.oidc", "client_secret", Kind::Str),
    Key::new("auth.oidc", "redirect_url", Kind::Str),
    Key::new("auth.oidc", "groups_claim", Kind::Str),
    Key::new("auth.oidc", "tenant_claim", Kind::Str),
    Key::new("auth.oidc", "scopes", Kind::StrList),
    Key::new("auth.groups", "admin", Kind::StrList),
    Key::new("auth.groups", "approver", Kind::StrList),
    // `[connectors]`: the connect pages' public origin and the connectors' OAuth clients.
    Key::new("connectors", "public_url", Kind::Str),
    Key::new("connectors.oauth.*", "client_id", Kind::Str),
    Key::new("connectors.oauth.*", "client_secret", Kind::Str),
    Key::new("connectors.oauth.*", "authorize_url", Kind::Str),
    Key::new("connectors.oauth.*", "token_url", Kind::Str),
    Key::new("connectors.oauth.*", "scopes", Kind::StrList),
    // `[network]`: the private hosts and ranges the guarded egress may reach.
    Key::new("network", "allow_private", Kind::StrList),
    // `[mcp]`: the host folders MCP servers may be given.
    Key::new("mcp", "folder_roots", Kind::StrList),
    // `[personas]`: the host folders personas may be installed from.
    Key::new("personas", "folder_roots", Kind::StrList),
    Key::flagged("log", "format", Kind::Str, "--log-format"),
    Key::flagged("log", "level", Kind::Str, "--log-level"),
];

/// Looks a key up by section and name (both already lowercase).
pub(crate) fn find(section: &str, key: &str) -> Option<&'static Key> {
    KNOWN_KEYS
        .iter()
        .find(|k| section_matches(k.section, section) && (k.key == "*" || k.key == key))
}

/// Whether `section` fits a declared section, where a `*` segment is one name made of lowercase
/// letters, digits, `-` and `_`.
fn section_matches(declared: &str, section: &str) -> bool {
    let (declared, actual): (Vec<&str>, Vec<&str>) =
        (declared.split('.').collect(), section.split('.').collect());
    declared.len() == actual.len()
        && declared.iter().zip(&actual).all(|(d, a)| {
            if *d == "*" {
                !a.is_empty()
                    && a.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'
                    })
            } else {
                d == a
            }
        })
}

/// How to set a known key, or an empty string for an unknown one.
pub(crate) fn how_to_set(section: &str, key: &str) -> String {
    find(section, key).map(Key::how_to_set).unwrap_or_default()
}

/// The section names, for error messages.
pub(crate) fn sections() -> Vec<&'static str> {
    let mut names: Vec<_> = KNOWN_KEYS.iter().map(|k| k.section).collect();
    names.dedup();
    names
}

/// The keys of one section, for error messages.
pub(crate) fn keys_of(section: &str) -> Vec<&'static str> {
    KNOWN_KEYS
        .iter()
        .filter(|k| section_matches(k.section, section))
        .map(|k| k.key)
        .collect()
}

/// Where a configuration value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Built into workmate.
    Default,
    /// A configuration file.
    File(PathBuf),
    /// An environment variable, by name.
    Env(String),
    /// A command-line flag, by name.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("the default"),
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Env(name) => write!(f, "environment variable {name}"),
            Self::Flag(name) => write!(f, "flag {name}"),
        }
    }
}
