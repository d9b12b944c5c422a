//! `/workmate mcp …`: the tenant's MCP servers. Everyone may list them and their tools; only
//! admins add and remove them (the registry audits both).
//!
//! A definition is typed as a URL (streamable HTTP), a command line (stdio, seeing no folder),
//! or the JSON an `mcpServers` entry holds (for folders, environment, headers, read-only tools).
//! Chat clients' curly quotes and Slack's `<url|label>` links are read as what was meant.

use std::fmt::Write as _;

use workmate_mcp::{McpManager, ServerDef, ServerStatus, Transport};

use super::{Caller, McpAction, Outcome, role_name};
use crate::connect_links::{ConnectRequest, MCP_TARGET_PREFIX};
use crate::{Chat, Result};
use workmate_cards::{Block, Card, Inline, RichText};

impl Chat {
    /// Runs one `/workmate mcp` action.
    pub(super) async fn mcp_command(&self, caller: &Caller, action: McpAction) -> Result<Outcome> {
        let Some(manager) = self.inner.mcp.get() else {
            return Ok(Outcome::refused(
                "MCP servers are not available on this workmate.",
            ));
        };
        let admin_only = matches!(action, McpAction::Add { .. } | McpAction::Remove(_));
        if admin_only && !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins add or remove MCP servers; you are {}.",
                role_name(caller.person.role())
            )));
        }
        let tenant = &caller.person.tenant;
        let by = caller.person.user.id.as_str();
        Ok(match action {
            McpAction::List => list(manager, caller).await?,
            McpAction::Add { name, definition } => match definition_of(&definition) {
                Err(why) => Outcome::refused(format!("Refused: {why}.")),
                Ok(def) => match manager.add(tenant, &name, &def, by).await {
                    Ok(created) => Outcome::ok(format!(
                        "MCP server `{name}` {}. Its tools ask for approval unless listed in \
                         read_only_tools; `/workmate mcp tools {name}` starts it and lists them.",
                        if created {
                            "is registered"
                        } else {
                            "is replaced"
                        }
                    )),
                    Err(workmate_mcp::Error::Store(e)) => return Err(e.into()),
                    Err(refused) => Outcome::refused(format!("Refused: {refused}.")),
                },
            },
            McpAction::Remove(name) => match manager.remove(tenant, &name, by).await {
                Ok(true) => Outcome::ok(format!(
                    "MCP server `{name}` is removed; its tools are gone from the next turn on."
                )),
                Ok(false) => Outcome::refused(format!(
                    "No MCP server named `{name}` is registered (see /workmate mcp list)."
                )),
                Err(workmate_mcp::Error::Store(e)) => return Err(e.into()),
                Err(refused) => Outcome::refused(format!("Refused: {refused}.")),
            },
            McpAction::Tools(name) => match manager
                .server_tools(tenant, &name, &caller.person.user.id)
                .await
            {
                Ok(tools) => {
                    let mut text = format!("Tools of MCP server `{name}`:");
                    for tool in &tools {
                        let how = match (tool.offered, tool.read_only) {
                            (false, _) => "not offered",
                            (true, true) => "runs unasked (read-only)",
                            (true, false) => "asks for approval",
                        };
                        let _ = write!(
                            text,
                            "\n• `{}` ({how}): {}",
                            tool.name,
                            first_line(&tool.description)
                        );
                    }
                    if tools.is_empty() {
                        text.push_str(" none.");
                    }
                    Outcome::ok(text)
                }
                Err(workmate_mcp::Error::Store(e)) => return Err(e.into()),
                Err(refused) => Outcome::refused(format!("{refused}.")),
            },
            McpAction::Connect(name) => self.mcp_sign_in(manager, caller, &name).await?,
        })
    }

    /// The private card with the link that signs the caller in to server `name`.
    async fn mcp_sign_in(
        &self,
        manager: &McpManager,
        caller: &Caller,
        name: &str,
    ) -> Result<Outcome> {
        let servers = match manager.list(&caller.person.tenant).await {
            Ok(servers) => servers,
            Err(workmate_mcp::Error::Store(e)) => return Err(e.into()),
            Err(other) => return Ok(Outcome::refused(format!("{other}."))),
        };
        let Some(server) = servers.iter().find(|s| s.name == name) else {
            return Ok(Outcome::refused(format!(
                "No MCP server named `{name}` is registered (see /workmate mcp list)."
            )));
        };
        if server.definition.oauth.is_none() {
            return Ok(Outcome::refused(format!(
                "MCP server `{name}` does not ask people to sign in; its tools are everyone's already."
            )));
        }
        let Some(links) = self.inner.connect_links.get() else {
            return Ok(Outcome::refused(
                "Signing in is not set up on this workmate (no connect pages; it needs the vault); ask an admin.",
            ));
        };
        let person = &caller.person;
        let link = links.connect_link(&ConnectRequest {
            tenant: person.tenant.clone(),
            user: person.user.id.clone(),
            name: person.user.display_name.clone(),
            connector: format!("{MCP_TARGET_PREFIX}{name}"),
            team: false,
        });
        let card = Card {
            blocks: vec![
                Block::Heading {
                    text: format!("Sign in to MCP server {name}"),
                },
                Block::Text(RichText(vec![Inline::Text(format!(
                    "`{name}` asks each person to sign in; workmate then calls it as you."
                ))])),
                Block::Text(RichText(vec![Inline::Link {
                    text: format!("Sign in to {name}"),
                    url: link.url,
                }])),
                Block::Fields(vec![("Confirmation code".into(), link.code)]),
                Block::Context(vec![Inline::Text(format!(
                    "The link is yours alone and works once, for {}; the page asks for the code.",
                    links.valid_for()
                ))]),
            ],
        };
        Ok(
            Outcome::ok(format!("Open the link on the card to sign in to `{name}`."))
                .with_card(card),
        )
    }
}

async fn list(manager: &McpManager, caller: &Caller) -> Result<Outcome> {
    let servers = match manager.list(&caller.person.tenant).await {
        Ok(servers) => servers,
        Err(workmate_mcp::Error::Store(e)) => return Err(e.into()),
        Err(other) => return Ok(Outcome::refused(format!("{other}."))),
    };
    if servers.is_empty() {
        return Ok(Outcome::ok(
            "No MCP servers are registered. An admin adds one with `/workmate mcp add <name> \
             <url | command | json>`.",
        ));
    }
    let mut text = "MCP servers (their tools are `mcp__<server>__<tool>`):".to_owned();
    for server in &servers {
        let _ = write!(text, "\n{}", line(server));
    }
    Ok(Outcome::ok(text))
}

fn line(server: &ServerStatus) -> String {
    let reach = match server.definition.transport() {
        Ok(Transport::Http { url }) => url.to_owned(),
        Ok(Transport::Stdio { command }) => format!("{command} (stdio, sandboxed)"),
        Err(e) => e.to_string(),
    };
    let state = &server.state;
    let mut line = format!("• `{}`: {reach}; {}", server.name, state.status);
    if let Some(tools) = state.tools {
        let _ = write!(line, ", {tools} tools");
    }
    if !server.definition.is_enabled() {
        line.push_str(", disabled");
    }
    if server.definition.oauth.is_some() {
        let _ = write!(
            line,
            "; sign in with `/workmate mcp connect {}`",
            server.name
        );
    }
    if state.restarts > 0 {
        let _ = write!(line, ", restarted {} times", state.restarts);
    }
    if let (Some(error), "down") = (&state.last_error, state.status) {
        let _ = write!(line, " ({}", first_line(error));
        if let Some(wait) = state.retry_in_s {
            let _ = write!(line, "; retried in {wait} s");
        }
        line.push(')');
    }
    line
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A definition as typed in chat: JSON, a URL, or a command line.
fn definition_of(typed: &str) -> std::result::Result<ServerDef, String> {
    let typed = straight_quotes(typed.trim());
    let typed = typed.trim_matches('`').trim();
    if typed.starts_with('{') {
        let json: serde_json::Value =
            serde_json::from_str(typed).map_err(|e| format!("the definition is not JSON: {e}"))?;
        return ServerDef::parse(&json)
            .map(|(_, def)| def)
            .map_err(|e| e.to_string());
    }
    let unlinked = slack_link(typed);
    if unlinked.starts_with("https://") || unlinked.starts_with("http://") {
        let json = serde_json::json!({ "url": unlinked });
        return ServerDef::parse(&json)
            .map(|(_, def)| def)
            .map_err(|e| e.to_string());
    }
    let words = workmate_policy::split_words(typed)
        .ok_or("cannot read the command line: a quote is not closed")?;
    let Some((command, args)) = words.split_first() else {
        return Err("give a URL, a command line or JSON".into());
    };
    let json = serde_json::json!({ "command": command, "args": args });
    ServerDef::parse(&json)
        .map(|(_, def)| def)
        .map_err(|e| e.to_string())
}

fn straight_quotes(text: &str) -> String {
    text.replace(['\u{201c}', '\u{201d}'], "\"")
        .replace(['\u{2018}', '\u{2019}'], "'")
}

/// `<https://x|label>` or `<https://x>` as Slack sends a typed link, as the URL.
fn slack_link(text: &str) -> &str {
    text.strip_prefix('<')
        .and_then(|t| t.strip_suffix('>'))
        .map_or(text, |inner| inner.split('|').next().unwrap_or(inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_is_typed_as_a_url_a_command_or_json() {
        let def = definition_of("<https://mcp.example.com/mcp|mcp.example.com/mcp>").unwrap();
        assert_eq!(def.url.as_deref(), Some("https://mcp.example.com/mcp"));
        let def = definition_of("node /opt/mcp/server.js --port 'a b'").unwrap();
        assert_eq!(def.command.as_deref(), Some("node"));
        assert_eq!(def.args, ["/opt/mcp/server.js", "--port", "a b"]);
        let def = definition_of("{\u{201c}url\u{201d}: \u{201c}https://x.example/mcp\u{201d}, \u{201c}read_only_tools\u{201d}: [\u{201c}search\u{201d}]}").unwrap();
        assert!(def.read_only_tools.contains("search"));
        assert!(
            definition_of("{\"url\": 3}")
                .unwrap_err()
                .contains("invalid")
        );
        assert!(definition_of("{not json").unwrap_err().contains("not JSON"));
    }
}
