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
    Key {
        section: "server",
        key: "listen",
        kind: Kind::Str,
        flag: Some("--listen"),
    },
    Key {
        section: "server",
        key: "data_dir",
        kind: Kind::Str,
        flag: Some("--data-dir"),
    },
    Key {
        section: "server",
        key: "shutdown_grace_ms",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "server",
        key: "request_timeout_ms",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "server",
        key: "header_read_timeout_ms",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "server",
        key: "max_body_bytes",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "server",
        key: "max_connections",
        kind: Kind::Int,
        flag: None,
    },
    // `[server.surface_tokens]`: `*` stands for any surface name.
    Key {
        section: "server.surface_tokens",
        key: "*",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "database",
        key: "url",
        kind: Kind::Str,
        flag: Some("--database-url"),
    },
    Key {
        section: "database",
        key: "max_connections",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "server",
        key: "admin_token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "server",
        key: "replica_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "engine",
        key: "max_iterations",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "engine",
        key: "default_model",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "engine",
        key: "recover_within_seconds",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "scheduler",
        key: "tick_seconds",
        kind: Kind::Int,
        flag: None,
    },
    // `[providers.NAME]`: `*` stands for any provider name (and, in `headers`, any header).
    Key {
        section: "providers.*",
        key: "kind",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "base_url",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "api_key",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "api_key_env",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "timeout_ms",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "models",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "vision_models",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "pdf_models",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "context_window",
        kind: Kind::Int,
        flag: None,
    },
    Key {
        section: "providers.*",
        key: "script",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "providers.*.headers",
        key: "*",
        kind: Kind::Str,
        flag: None,
    },
    // `[platforms.slack]`: the Slack app (HTTP mode or Socket Mode).
    Key {
        section: "platforms.slack",
        key: "signing_secret",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.slack",
        key: "bot_token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.slack",
        key: "app_token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.slack",
        key: "api_base",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.slack",
        key: "mode",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.slack",
        key: "admins",
        kind: Kind::StrList,
        flag: None,
    },
    // `[platforms.feishu]`: the Feishu / Lark app (webhook or long connection).
    Key {
        section: "platforms.feishu",
        key: "app_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "app_secret",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "encrypt_key",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "verification_token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "mode",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "api_base",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.feishu",
        key: "admins",
        kind: Kind::StrList,
        flag: None,
    },
    // `[platforms.wecom]`: WeCom's smart robot (callback or long connection) and self-built app.
    Key {
        section: "platforms.wecom",
        key: "corp_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "encoding_aes_key",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "bot_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "agent_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "secret",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "mode",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "api_base",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.wecom",
        key: "admins",
        kind: Kind::StrList,
        flag: None,
    },
    // `[platforms.dingtalk]`: a DingTalk app's robot (Stream connection or HTTP callbacks).
    Key {
        section: "platforms.dingtalk",
        key: "client_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "client_secret",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "card_template_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "answer_template_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "mode",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "api_base",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "gateway_base",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "callback_route_key",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "token",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "encoding_aes_key",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "platforms.dingtalk",
        key: "admins",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "tools",
        key: "workspaces_dir",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "tools",
        key: "shell_sandbox",
        kind: Kind::Str,
        flag: None,
    },
    // `[dlp]`: the operator's own redaction rules.
    Key {
        section: "dlp",
        key: "fields",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "dlp",
        key: "patterns",
        kind: Kind::StrList,
        flag: None,
    },
    // `[audit.*]`: the sinks the audit trail is streamed to.
    Key {
        section: "audit.redis",
        key: "url",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "audit.redis",
        key: "stream_prefix",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "audit.nats",
        key: "url",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "audit.nats",
        key: "subject_prefix",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "audit.nats",
        key: "stream",
        kind: Kind::Str,
        flag: None,
    },
    // `[vault]`: the credential vault's master keys (the key itself may instead be in the
    // environment variable WORKMATE_VAULT_KEY, which is not a configuration key).
    Key {
        section: "vault",
        key: "key_file",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "vault",
        key: "previous_key_files",
        kind: Kind::StrList,
        flag: None,
    },
    // `[auth]`: single sign-on and the break-glass admin token.
    Key {
        section: "auth",
        key: "break_glass_admin_token",
        kind: Kind::Bool,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "issuer",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "client_id",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "client_secret",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "redirect_url",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "groups_claim",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "tenant_claim",
        kind: Kind::Str,
        flag: None,
    },
    Key {
        section: "auth.oidc",
        key: "scopes",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "auth.groups",
        key: "admin",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "auth.groups",
        key: "approver",
        kind: Kind::StrList,
        flag: None,
    },
    Key {
        section: "log",
        key: "format",
        kind: Kind::Str,
        flag: Some("--log-format"),
    },
    Key {
        section: "log",
        key: "level",
        kind: Kind::Str,
        flag: Some("--log-level"),
    },
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
