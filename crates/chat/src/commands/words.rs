//! Reading the words of a `/workmate` command: ids, modes, models, roles, user mentions.
//!
//! Invariant: every reader either returns the value or a [`CommandError`] that quotes the word
//! (shortened) and says what was expected.

use workmate_protocol::PermissionMode;
use workmate_store::Role;

use super::parse::{AutomationAction, CommandError};

pub(super) fn action_of(word: &str) -> Result<AutomationAction, CommandError> {
    match word.to_ascii_lowercase().as_str() {
        "run" => Ok(AutomationAction::Run),
        "pause" => Ok(AutomationAction::Pause),
        "resume" => Ok(AutomationAction::Resume),
        "delete" => Ok(AutomationAction::Delete),
        _ => Err(CommandError::new(format!(
            "unknown automation action `{}`; use run, pause, resume or delete",
            shorten(word)
        ))),
    }
}

/// An automation id as `/workmate automations` shows it: letters, digits, `-` and `_`.
pub(super) fn automation_id_of(word: &str) -> Result<String, CommandError> {
    const MAX: usize = 100;
    let valid = word.len() <= MAX
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if valid {
        Ok(word.to_owned())
    } else {
        Err(CommandError::new(format!(
            "`{}` is not an automation id; `/workmate automations` lists them",
            shorten(word)
        )))
    }
}

/// The text after its first `count` words, trimmed, with its inner spacing as typed.
pub(super) fn after_words(text: &str, count: usize) -> &str {
    let mut rest = text.trim_start();
    for _ in 0..count {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest.trim_end()
}

/// An MCP server name as `/workmate mcp list` shows it.
pub(super) fn mcp_name_of(word: &str) -> Result<String, CommandError> {
    let name = word.to_ascii_lowercase();
    workmate_mcp::check_name(&name)
        .map(|()| name)
        .map_err(|e| CommandError::new(e.to_string()))
}

/// A connector's name as `/workmate connectors` lists it.
pub(super) fn connector_of(word: &str) -> Result<String, CommandError> {
    let name = word.to_ascii_lowercase();
    let valid = (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(name)
    } else {
        Err(CommandError::new(format!(
            "`{}` is not a connector name; `/workmate connectors` lists them",
            shorten(word)
        )))
    }
}

/// A persona id as `/workmate persona` lists it.
pub(super) fn persona_of(word: &str) -> Result<String, CommandError> {
    let id = word.to_ascii_lowercase();
    let valid = id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if valid {
        Ok(id)
    } else {
        Err(CommandError::new(format!(
            "`{}` is not a persona id; `/workmate persona` lists them",
            shorten(word)
        )))
    }
}

pub(super) fn mode_of(word: &str) -> Result<PermissionMode, CommandError> {
    match word.to_ascii_lowercase().as_str() {
        "discuss" => Ok(PermissionMode::Discuss),
        "plan" => Ok(PermissionMode::Plan),
        "interactive" => Ok(PermissionMode::Interactive),
        "auto" => Ok(PermissionMode::Auto),
        "custom" => Ok(PermissionMode::Custom),
        _ => Err(CommandError::new(format!(
            "unknown mode `{}`",
            shorten(word)
        ))),
    }
}

pub(super) fn model_of(word: &str) -> Result<String, CommandError> {
    match word.split_once(':') {
        Some((provider, model)) if !provider.is_empty() && !model.is_empty() => Ok(word.to_owned()),
        _ => Err(CommandError::new(format!(
            "a model is `provider:model`, not `{}`",
            shorten(word)
        ))),
    }
}

pub(super) fn role_of(word: &str) -> Result<Role, CommandError> {
    match word.to_ascii_lowercase().as_str() {
        "member" => Ok(Role::Member),
        "approver" => Ok(Role::Approver),
        "admin" => Ok(Role::Admin),
        _ => Err(CommandError::new(format!(
            "unknown role `{}`",
            shorten(word)
        ))),
    }
}

/// A user as `<@U123>`, `<@U123|name>` or `U123`, reduced to the id.
pub(super) fn user_of(word: &str) -> Result<String, CommandError> {
    let id = match word.strip_prefix("<@") {
        Some(rest) => {
            let Some(inner) = rest.strip_suffix('>') else {
                return Err(CommandError::new(format!(
                    "`{}` is not a user",
                    shorten(word)
                )));
            };
            inner.split('|').next().unwrap_or_default()
        }
        None => word.strip_prefix('@').unwrap_or(word),
    };
    let valid = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if valid {
        Ok(id.to_owned())
    } else {
        Err(CommandError::new(format!(
            "`{}` is not a user",
            shorten(word)
        )))
    }
}

/// At most 40 characters of untrusted input, cut on a character boundary.
pub(super) fn shorten(word: &str) -> String {
    const MAX: usize = 40;
    match word.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &word[..at]),
        None => word.to_owned(),
    }
}
