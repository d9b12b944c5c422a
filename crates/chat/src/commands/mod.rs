//! The `/workmate …` commands, the same on every platform: parsed once, run once, audited once.
//!
//! Invariants: every command, refused or not, leaves one `chat_command` audit record naming the
//! platform it came from; a refusal says why; a command's answer is built from a few store reads
//! and at most one engine command that does not wait on a turn, so it comes back well inside a
//! platform's deadline. The automation commands live in `automations.rs`, settings in
//! `settings.rs`, roles in `roles.rs`, personas and skills in `personas.rs`, MCP servers in
//! `mcp.rs`, connectors in `connectors.rs`, the session commands in `session.rs`; who typed a
//! command and what it came to (`Caller`, [`Outcome`]) in `caller.rs`, which depends on no
//! command.

mod automations;
mod caller;
mod connectors;
mod conversations;
mod inbox;
mod mcp;
mod parse;
mod personas;
mod roles;
mod session;
mod settings;
mod words;

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;
use workmate_protocol::Command;
use workmate_store::{NewAuditRecord, utc_day};

pub use caller::Outcome;
pub(crate) use caller::{Caller, role_name};
pub use parse::{
    AutomationAction, ChatCommand, CommandError, ConnectorsAction, McpAction, USAGE, parse_command,
};
pub(crate) use parse::{COMMAND_WORD, thread_command};
pub(crate) use session::{Change, may_change};

use crate::{Chat, Result};

/// Parses and runs `text` (what follows `/workmate`), audits it, and returns the reply.
pub(crate) async fn run(chat: &Chat, caller: &Caller, text: &str) -> Result<Outcome> {
    let (name, outcome) = match parse_command(text) {
        Ok(parsed) => (parsed.name(), chat.run_parsed(caller, parsed).await?),
        Err(error) => (
            "invalid",
            Outcome {
                status: "invalid",
                ..Outcome::ok(error.to_string())
            },
        ),
    };
    let record = NewAuditRecord {
        session_id: outcome.session.clone(),
        actor: Some(caller.person.user.id.as_str().to_owned()),
        stage: "chat_command".into(),
        tool: None,
        status: Some(outcome.status.into()),
        detail: json!({"command": name, "outcome": outcome.status, "via": caller.surface.as_str()}),
    };
    chat.store()
        .audit()
        .append(&caller.person.tenant, &record)
        .await?;
    Ok(outcome)
}

impl Chat {
    async fn run_parsed(&self, caller: &Caller, command: ChatCommand) -> Result<Outcome> {
        let actor = caller.person.actor();
        Ok(match command {
            ChatCommand::Help => Outcome::ok(help()),
            ChatCommand::Whoami => {
                let user = &caller.person.user;
                Outcome::ok(format!(
                    "You are {} ({}), {} in tenant {}.",
                    user.id,
                    user.display_name,
                    role_name(user.role),
                    caller.person.tenant
                ))
            }
            ChatCommand::Link => {
                let settings = self
                    .store()
                    .tenants()
                    .settings(&caller.person.tenant)
                    .await?;
                let policy = workmate_engine::binding::binding_policy(&settings);
                let card = self.link_card(
                    &caller.person,
                    caller.surface,
                    policy.required.then_some(policy),
                );
                let text = match &caller.person.user.sso_subject {
                    Some(subject) => format!("Your account is linked to `{subject}`."),
                    None => "Open the link on the card to link your account.".to_owned(),
                };
                Outcome::ok(text).with_card(card)
            }
            ChatCommand::Mode(mode) => {
                self.on_session(caller, false, |session| match mode {
                    None => Change::Show(format!("The mode is {}", session.mode.as_str())),
                    Some(mode) => Change::Apply(
                        Command::SetMode { mode, actor },
                        format!("mode set to {}", mode.as_str()),
                    ),
                })
                .await?
            }
            ChatCommand::Model(model) => {
                self.on_session(caller, false, |session| match model {
                    None => Change::Show(format!("The model is {}", session.model)),
                    Some(model) => Change::Apply(
                        Command::SwitchModel {
                            model: model.clone(),
                            actor,
                        },
                        format!("model set to {model}"),
                    ),
                })
                .await?
            }
            ChatCommand::Persona(id) => self.persona(caller, id).await?,
            ChatCommand::PersonaDefault(id) => self.persona_default(caller, &id).await?,
            ChatCommand::PersonaConsent { id, enabled } => {
                self.persona_consent(caller, &id, enabled).await?
            }
            ChatCommand::Skills => self.skills(caller).await?,
            ChatCommand::Mcp(action) => self.mcp_command(caller, action).await?,
            ChatCommand::Connectors(action) => self.connectors_command(caller, action).await?,
            ChatCommand::Stop => {
                self.on_session(caller, true, |_| {
                    Change::Apply(
                        Command::Interrupt { actor },
                        "asked the running turn (if any) to stop".into(),
                    )
                })
                .await?
            }
            ChatCommand::Compact => {
                self.on_session(caller, false, |_| {
                    Change::Apply(
                        Command::Compact { actor },
                        "compacting the conversation (its older turns are summarized; the \
                         thread shows when it is done)"
                            .into(),
                    )
                })
                .await?
            }
            ChatCommand::Memory(switch) => self.memory(caller, switch).await?,
            ChatCommand::Inbox(page) => self.inbox(caller, page).await?,
            ChatCommand::Automations => self.automations(caller).await?,
            ChatCommand::Automation { action, id } => self.automation(caller, action, &id).await?,
            ChatCommand::Rules => self.rules(caller).await?,
            ChatCommand::RulesRevoke(entry) => self.revoke_rule(caller, &entry).await?,
            ChatCommand::Usage => self.usage(caller).await?,
            ChatCommand::New => self.new_conversation(caller).await?,
            ChatCommand::Notify(switch) => self.notify(caller, switch).await?,
            ChatCommand::Conversations(shared) => self.share_here(caller, shared).await?,
            ChatCommand::Settings(change) => self.settings(caller, change).await?,
            ChatCommand::RoleGrant { user, role } => self.grant(caller, &user, role).await?,
            ChatCommand::RoleRevoke { user, role } => self.revoke(caller, &user, role).await?,
        })
    }

    /// Shows, or turns on or off, whether memories are saved for the caller.
    async fn memory(&self, caller: &Caller, switch: Option<bool>) -> Result<Outcome> {
        let (tenant, user) = (&caller.person.tenant, &caller.person.user.id);
        let memories = self.store().memories();
        if let Some(on) = switch {
            memories.set_saving(tenant, user, on).await?;
        }
        let on = memories.saving_on(tenant, user).await?;
        Ok(Outcome::ok(if on {
            "Memory saving is on for you: workmate may save facts you want remembered, and says so \
             in the thread each time (`/workmate memory off` stops it)."
        } else {
            "Memory saving is off for you: workmate will not save, change or delete memories for \
             you (`/workmate memory on` turns it back on)."
        }))
    }

    async fn usage(&self, caller: &Caller) -> Result<Outcome> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let day = utc_day(now_ms);
        let usage = self.store().usage();
        let tenant = &caller.person.tenant;
        let mine = usage
            .tokens_on_day(tenant, Some(&caller.person.user.id), &day)
            .await?;
        let mut text = format!("Today ({day} UTC) you used {mine} tokens.");
        if caller.is_admin() {
            let all = usage.tokens_on_day(tenant, None, &day).await?;
            let _ = write!(text, " The tenant used {all}.");
        }
        Ok(Outcome::ok(text))
    }
}

fn help() -> String {
    [
        "/workmate commands (only you see the answers):",
        "• help: this list",
        "• whoami: your user id, role and tenant",
        "• link: link your chat account to your company account (single sign-on)",
        "• mode [discuss|plan|interactive|auto|custom]: show or set the conversation's mode",
        "• model [provider:model]: show or set the conversation's model",
        "• persona [<id>]: list the personas, or switch the conversation to one (its \
         instructions, tools and model)",
        "• persona default <id>: the persona new threads of this channel start with: admins only",
        "• persona consent|disable <id>: enable an installed persona after reviewing what it asks \
         for, or turn it off: admins only",
        "• skills: the skills workmate can load in this conversation",
        "• stop: stop the conversation's running turn",
        "• new: in a group without threads (WeCom, DingTalk), start a fresh conversation of your \
         own (each person has their own there)",
        "• settings conversations shared|personal: in this group or thread, let everyone talk to \
         one conversation, or give each person their own (the default): admins only",
        "• compact: summarize the conversation's older turns now, so long threads keep fitting \
         the model (it also happens by itself near the model's limit)",
        "• memory [on|off]: show, or turn on or off, whether workmate saves memories for you",
        "• inbox [page]: what waits for your answer, each with its buttons",
        "• notify [on|off]: show, or turn on or off, whether you (an approver) get a private copy \
         of each prompt that waits for approvers",
        "• automations: this workspace's automations with their ids, schedules and next runs",
        "• automations run|pause|resume|delete <id>: run one now, pause it, resume it or delete it \
         (its owner or an admin)",
        "• rules: the standing rules of the automations (calls their runs make without asking)",
        "• rules revoke [<automation id>] <tool> <target>: remove one (its owner or an admin)",
        "• usage: tokens used today",
        "• settings: the workspace settings (time zone, who may create automations, separation of \
         duties, permissions) with their defaults",
        "• settings <key> <value>: set one (the value as JSON or plain text, `default` to restore \
         the default): admins only",
        "• role grant <user> <member|approver|admin>, role revoke <user> <approver|admin>: admins only",
        "In a thread, mention workmate and type the command (`@workmate /workmate stop`): mode, \
         model, stop and compact then act on that thread's conversation, for its owner or an admin. The \
         native slash command acts on your latest conversation in a direct message; in a \
         channel, `stop` lists your running conversations there, each with a Stop button.",
    ]
    .join("\n")
}
