//! Slash-command bodies: flat `application/x-www-form-urlencoded` fields.
//!
//! Invariant: the ids needed to answer (team, channel, user, command, `response_url`,
//! `trigger_id`) are present and non-empty, or decoding fails; `text` may be empty (`/agent`
//! with no arguments). The deprecated verification `token` is never kept.

use super::DecodeError;

/// A slash command invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlashCommand {
    /// Workspace id.
    pub team_id: String,
    /// Workspace subdomain.
    pub team_domain: Option<String>,
    /// Enterprise Grid org, when any.
    pub enterprise_id: Option<String>,
    /// Conversation the command was typed in.
    pub channel_id: String,
    /// That conversation's name.
    pub channel_name: Option<String>,
    /// Who typed it.
    pub user_id: String,
    /// Their handle.
    pub user_name: Option<String>,
    /// The command with its slash, e.g. `/agent`.
    pub command: String,
    /// Everything after the command, decoded; may be empty.
    pub text: String,
    /// The receiving app.
    pub api_app_id: Option<String>,
    /// Where delayed answers go: 5 uses within 30 minutes.
    pub response_url: String,
    /// Opens a modal; valid for about 3 s.
    pub trigger_id: String,
}

/// Decodes a slash-command request body. For repeated fields the first occurrence wins.
pub fn decode_slash_command(body: &[u8]) -> Result<SlashCommand, DecodeError> {
    let mut fields = Fields::default();
    for (key, value) in form_urlencoded::parse(body) {
        let slot = match key.as_ref() {
            "team_id" => &mut fields.team_id,
            "team_domain" => &mut fields.team_domain,
            "enterprise_id" => &mut fields.enterprise_id,
            "channel_id" => &mut fields.channel_id,
            "channel_name" => &mut fields.channel_name,
            "user_id" => &mut fields.user_id,
            "user_name" => &mut fields.user_name,
            "command" => &mut fields.command,
            "text" => &mut fields.text,
            "api_app_id" => &mut fields.api_app_id,
            "response_url" => &mut fields.response_url,
            "trigger_id" => &mut fields.trigger_id,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(value.into_owned());
        }
    }
    Ok(SlashCommand {
        team_id: required(fields.team_id, "team_id")?,
        team_domain: optional(fields.team_domain),
        enterprise_id: optional(fields.enterprise_id),
        channel_id: required(fields.channel_id, "channel_id")?,
        channel_name: optional(fields.channel_name),
        user_id: required(fields.user_id, "user_id")?,
        user_name: optional(fields.user_name),
        command: required(fields.command, "command")?,
        text: fields.text.unwrap_or_default(),
        api_app_id: optional(fields.api_app_id),
        response_url: required(fields.response_url, "response_url")?,
        trigger_id: required(fields.trigger_id, "trigger_id")?,
    })
}

#[derive(Default)]
struct Fields {
    team_id: Option<String>,
    team_domain: Option<String>,
    enterprise_id: Option<String>,
    channel_id: Option<String>,
    channel_name: Option<String>,
    user_id: Option<String>,
    user_name: Option<String>,
    command: Option<String>,
    text: Option<String>,
    api_app_id: Option<String>,
    response_url: Option<String>,
    trigger_id: Option<String>,
}

fn required(value: Option<String>, name: &'static str) -> Result<String, DecodeError> {
    optional(value).ok_or(DecodeError::MissingField(name))
}

/// Slack sends absent optional values as empty fields (`enterprise_id=`).
fn optional(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}
