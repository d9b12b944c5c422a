//! The `/workmate …` text commands, parsed the same way on every platform.
//!
//! Invariant: [`parse_command`] never panics; whatever it cannot read becomes a
//! [`CommandError`] whose message ends with the usage line, so the caller can show it as is.

use std::fmt;

use workmate_protocol::PermissionMode;
use workmate_store::Role;

use super::words::{
    action_of, after_words, automation_id_of, connector_of, mcp_name_of, mode_of, model_of,
    persona_of, role_of, shorten, user_of,
};

/// Every command, one per line: what `help` shows and every error ends with.
pub const USAGE: &str = "usage: /workmate help | whoami | link | mode [discuss|plan|interactive|auto|custom] \
| model [provider:model] | persona [<id>] | persona default <id> | persona consent|disable <id> \
| skills | mcp [list] | mcp add <name> <url|command…|json> | mcp remove|tools|connect <name> \
| connectors [list] | connectors connect|disconnect <name> [team] \
| stop | compact | memory [on|off] | inbox | automations | automations run|pause|resume|delete <id> \
| rules | rules revoke [<automation id>] <tool> <target> | usage | settings [<key> <value>] \
| role grant <user> <member|approver|admin> | role revoke <user> <approver|admin>";

/// A parsed chat command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatCommand {
    /// The command list.
    Help,
    /// Who the caller is: user id, role, tenant.
    Whoami,
    /// A "link your account" card, to bind the caller's chat account to their directory account.
    Link,
    /// Show (`None`) or change the session's permission mode.
    Mode(Option<PermissionMode>),
    /// Show (`None`) or change the session's model (`provider:model`).
    Model(Option<String>),
    /// List the personas (`None`) or switch the thread to one.
    Persona(Option<String>),
    /// Make a persona the one new threads of this channel start with (admins).
    PersonaDefault(String),
    /// Consent to an installed persona's capabilities, or withdraw it (admins).
    PersonaConsent {
        /// The persona id.
        id: String,
        /// `true` to enable, `false` to disable.
        enabled: bool,
    },
    /// The skills this thread can load.
    Skills,
    /// The tenant's MCP servers: list, add, remove (admins), or one's tools.
    Mcp(McpAction),
    /// The connectors: what the caller connected, and connecting or disconnecting one.
    Connectors(ConnectorsAction),
    /// Stop the running turn.
    Stop,
    /// Compact the conversation now (summarize its older turns).
    Compact,
    /// Show (`None`) or turn on or off whether memories are saved for the caller.
    Memory(Option<bool>),
    /// The caller's pending inbox items, as cards with their buttons: this page of them
    /// (from 1).
    Inbox(usize),
    /// The tenant's automations.
    Automations,
    /// Run, pause, resume or delete one automation.
    Automation {
        /// What to do.
        action: AutomationAction,
        /// The automation's id.
        id: String,
    },
    /// The standing rules of the tenant's automations.
    Rules,
    /// Revoke one standing rule: `<tool> <target>`, optionally after the automation's id (the
    /// text as typed after `revoke`, inner spacing kept, since a target may hold spaces).
    RulesRevoke(String),
    /// Tokens spent today.
    Usage,
    /// Start the caller's next conversation in a group without threads.
    New,
    /// Show (`None`), or turn on or off, whether the caller (an approver) is told privately of
    /// prompts that wait for them.
    Notify(Option<bool>),
    /// Who talks to the conversation here: anyone in the group or thread (`true`), or each
    /// person to their own (`false`): `settings conversations shared|personal`.
    Conversations(bool),
    /// Show the tenant's settings (`None`), or set one: the key (lower-cased) and the value text
    /// as typed after it, inner spacing kept (a JSON value may hold spaces).
    Settings(Option<(String, String)>),
    /// Give a user a role.
    RoleGrant {
        /// The platform user id (mentions are reduced to their id).
        user: String,
        /// The role given.
        role: Role,
    },
    /// Take a role from a user (they become a member).
    RoleRevoke {
        /// The platform user id (mentions are reduced to their id).
        user: String,
        /// The role taken.
        role: Role,
    },
}

/// What `/workmate automations <action> <id>` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutomationAction {
    /// Start a run now.
    Run,
    /// Stop it firing until resumed.
    Pause,
    /// Let it fire again.
    Resume,
    /// Delete it and its run history.
    Delete,
}

impl ChatCommand {
    /// A short name for logs and audit records, e.g. `"role_grant"`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Help => "help",
            Self::Whoami => "whoami",
            Self::Link => "link",
            Self::Mode(_) => "mode",
            Self::Model(_) => "model",
            Self::Persona(None) => "persona",
            Self::Persona(Some(_)) => "persona_switch",
            Self::PersonaDefault(_) => "persona_default",
            Self::PersonaConsent { enabled: true, .. } => "persona_consent",
            Self::PersonaConsent { enabled: false, .. } => "persona_disable",
            Self::Skills => "skills",
            Self::Mcp(McpAction::List) => "mcp_list",
            Self::Mcp(McpAction::Add { .. }) => "mcp_add",
            Self::Mcp(McpAction::Remove(_)) => "mcp_remove",
            Self::Mcp(McpAction::Tools(_)) => "mcp_tools",
            Self::Mcp(McpAction::Connect(_)) => "mcp_connect",
            Self::Connectors(ConnectorsAction::List) => "connectors_list",
            Self::Connectors(ConnectorsAction::Connect { .. }) => "connectors_connect",
            Self::Connectors(ConnectorsAction::Disconnect { .. }) => "connectors_disconnect",
            Self::Stop => "stop",
            Self::Compact => "compact",
            Self::Memory(None) => "memory",
            Self::Memory(Some(_)) => "memory_set",
            Self::Inbox(_) => "inbox",
            Self::Automations => "automations",
            Self::Automation { action, .. } => match action {
                AutomationAction::Run => "automation_run",
                AutomationAction::Pause => "automation_pause",
                AutomationAction::Resume => "automation_resume",
                AutomationAction::Delete => "automation_delete",
            },
            Self::Rules => "rules",
            Self::RulesRevoke(_) => "rules_revoke",
            Self::Usage => "usage",
            Self::New => "new",
            Self::Notify(None) => "notify",
            Self::Notify(Some(_)) => "notify_set",
            Self::Conversations(true) => "conversations_shared",
            Self::Conversations(false) => "conversations_personal",
            Self::Settings(None) => "settings",
            Self::Settings(Some(_)) => "settings_set",
            Self::RoleGrant { .. } => "role_grant",
            Self::RoleRevoke { .. } => "role_revoke",
        }
    }
}

/// What `/workmate mcp` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpAction {
    /// The registered servers and what each is doing.
    List,
    /// Register (or replace) a server (admins).
    Add {
        /// Its name.
        name: String,
        /// Its definition as typed: a URL, a command line, or JSON.
        definition: String,
    },
    /// Remove a server (admins).
    Remove(String),
    /// A server's tools (starting it if needed).
    Tools(String),
    /// A private link to sign in to a server that asks each person to.
    Connect(String),
}

/// What `/workmate connectors` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectorsAction {
    /// Every connector, and which the caller has connected.
    List,
    /// A private card with the link that connects one.
    Connect {
        /// The connector.
        name: String,
        /// For the whole tenant (admins).
        team: bool,
    },
    /// Removes the caller's (or, with `team`, the tenant's) credentials for one.
    Disconnect {
        /// The connector.
        name: String,
        /// The tenant's (admins).
        team: bool,
    },
}

/// Text that is not a command; the message says why and shows the usage line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    reason: String,
}

impl CommandError {
    pub(super) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// Why the text was not understood (without the usage line).
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{USAGE}", self.reason)
    }
}

impl std::error::Error for CommandError {}

/// Reads the text after the command name (`"role grant <@U1> admin"`). Empty text is `help`.
pub fn parse_command(text: &str) -> Result<ChatCommand, CommandError> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some((&first, rest)) = words.split_first() else {
        return Ok(ChatCommand::Help);
    };
    let verb = first.to_ascii_lowercase();
    let command = match (verb.as_str(), rest) {
        ("help", []) => ChatCommand::Help,
        ("whoami", []) => ChatCommand::Whoami,
        ("link", []) => ChatCommand::Link,
        ("mode", []) => ChatCommand::Mode(None),
        ("mode", [mode]) => ChatCommand::Mode(Some(mode_of(mode)?)),
        ("model", []) => ChatCommand::Model(None),
        ("model", [model]) => ChatCommand::Model(Some(model_of(model)?)),
        ("persona" | "personas", []) => ChatCommand::Persona(None),
        ("persona", [id]) => ChatCommand::Persona(Some(persona_of(id)?)),
        ("persona", [sub, id]) if sub.eq_ignore_ascii_case("default") => {
            ChatCommand::PersonaDefault(persona_of(id)?)
        }
        ("persona", [sub, id]) if sub.eq_ignore_ascii_case("consent") => {
            ChatCommand::PersonaConsent {
                id: persona_of(id)?,
                enabled: true,
            }
        }
        ("persona", [sub, id]) if sub.eq_ignore_ascii_case("disable") => {
            ChatCommand::PersonaConsent {
                id: persona_of(id)?,
                enabled: false,
            }
        }
        ("skills", []) => ChatCommand::Skills,
        ("mcp", []) => ChatCommand::Mcp(McpAction::List),
        ("mcp", [sub]) if sub.eq_ignore_ascii_case("list") => ChatCommand::Mcp(McpAction::List),
        ("mcp", [sub, name, _, ..]) if sub.eq_ignore_ascii_case("add") => {
            ChatCommand::Mcp(McpAction::Add {
                name: mcp_name_of(name)?,
                definition: after_words(text, 3).to_owned(),
            })
        }
        ("mcp", [sub, name]) if sub.eq_ignore_ascii_case("remove") => {
            ChatCommand::Mcp(McpAction::Remove(mcp_name_of(name)?))
        }
        ("mcp", [sub, name]) if sub.eq_ignore_ascii_case("tools") => {
            ChatCommand::Mcp(McpAction::Tools(mcp_name_of(name)?))
        }
        ("mcp", [sub, name]) if sub.eq_ignore_ascii_case("connect") => {
            ChatCommand::Mcp(McpAction::Connect(mcp_name_of(name)?))
        }
        ("connectors" | "connector", rest) => ChatCommand::Connectors(connectors_action(rest)?),
        ("stop", []) => ChatCommand::Stop,
        ("compact", []) => ChatCommand::Compact,
        ("memory", []) => ChatCommand::Memory(None),
        ("memory", [switch]) => {
            ChatCommand::Memory(Some(match switch.to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => {
                    return Err(CommandError::new(format!(
                        "memory takes on or off, not `{}`",
                        shorten(switch)
                    )));
                }
            }))
        }
        ("inbox", []) => ChatCommand::Inbox(1),
        ("inbox", [page]) => ChatCommand::Inbox(
            page.parse::<usize>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| {
                    CommandError::new(format!(
                        "inbox takes a page number, not `{}`",
                        shorten(page)
                    ))
                })?,
        ),
        ("automations" | "automation", []) => ChatCommand::Automations,
        ("automations" | "automation", [action, id]) => ChatCommand::Automation {
            action: action_of(action)?,
            id: automation_id_of(id)?,
        },
        ("rules", []) => ChatCommand::Rules,
        ("rules", [sub, _, ..]) if sub.eq_ignore_ascii_case("revoke") => {
            ChatCommand::RulesRevoke(after_words(text, 2).to_owned())
        }
        ("usage", []) => ChatCommand::Usage,
        ("new", []) => ChatCommand::New,
        ("notify", []) => ChatCommand::Notify(None),
        ("notify", [switch]) => {
            ChatCommand::Notify(Some(match switch.to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                _ => {
                    return Err(CommandError::new(format!(
                        "notify takes on or off, not `{}`",
                        shorten(switch)
                    )));
                }
            }))
        }
        ("settings", []) => ChatCommand::Settings(None),
        ("settings", [key, mode]) if key.eq_ignore_ascii_case("conversations") => {
            ChatCommand::Conversations(match mode.to_ascii_lowercase().as_str() {
                "shared" => true,
                "personal" => false,
                _ => {
                    return Err(CommandError::new(format!(
                        "conversations takes shared or personal, not `{}`",
                        shorten(mode)
                    )));
                }
            })
        }
        ("settings", [key]) => {
            return Err(CommandError::new(format!(
                "give `{}` a value: settings <key> <value> (`default` restores the default)",
                shorten(key)
            )));
        }
        ("settings", [key, _, ..]) => ChatCommand::Settings(Some((
            key.to_ascii_lowercase(),
            after_words(text, 2).to_owned(),
        ))),
        ("role", [sub, user, role]) if sub.eq_ignore_ascii_case("grant") => {
            ChatCommand::RoleGrant {
                user: user_of(user)?,
                role: role_of(role)?,
            }
        }
        ("role", [sub, user, role]) if sub.eq_ignore_ascii_case("revoke") => {
            let role = role_of(role)?;
            if role == Role::Member {
                return Err(CommandError::new(
                    "member is everyone's base role; revoke approver or admin",
                ));
            }
            ChatCommand::RoleRevoke {
                user: user_of(user)?,
                role,
            }
        }
        (
            "help" | "whoami" | "link" | "mode" | "model" | "persona" | "personas" | "skills"
            | "mcp" | "stop" | "compact" | "memory" | "inbox" | "automations" | "automation"
            | "rules" | "usage" | "role",
            _,
        ) => {
            return Err(CommandError::new(format!("wrong arguments for `{verb}`")));
        }
        _ => {
            return Err(CommandError::new(format!(
                "unknown command `{}`",
                shorten(first)
            )));
        }
    };
    Ok(command)
}

/// The words after `connectors`: `[list]`, `[connect] <name> [team]`, `disconnect <name> [team]`.
fn connectors_action(words: &[&str]) -> Result<ConnectorsAction, CommandError> {
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    let team = |rest: &[&str]| -> Result<bool, CommandError> {
        match rest {
            [] => Ok(false),
            ["team"] => Ok(true),
            other => Err(CommandError::new(format!(
                "after the connector's name only `team` may follow, not `{}`",
                shorten(&other.join(" "))
            ))),
        }
    };
    Ok(match lower.as_slice() {
        [] | ["list"] => ConnectorsAction::List,
        ["disconnect", name, rest @ ..] => ConnectorsAction::Disconnect {
            name: connector_of(name)?,
            team: team(rest)?,
        },
        ["connect", name, rest @ ..] => ConnectorsAction::Connect {
            name: connector_of(name)?,
            team: team(rest)?,
        },
        ["connect" | "disconnect"] => {
            return Err(CommandError::new(
                "name the connector, e.g. `/workmate connectors connect github`",
            ));
        }
        [name, rest @ ..] => ConnectorsAction::Connect {
            name: connector_of(name)?,
            team: team(rest)?,
        },
    })
}

/// The word a thread command starts with.
pub(crate) const COMMAND_WORD: &str = "/workmate";

/// The text after `/workmate` when a message is a thread command.
pub(crate) fn thread_command(text: &str) -> Option<&str> {
    let rest = text.trim_start().strip_prefix(COMMAND_WORD)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest.trim())
}

#[cfg(test)]
mod tests;
