//! `POST /v1/platforms/slack/commands`: the `/workmate …` slash command.
//!
//! Invariants: the answer is the HTTP response itself (ephemeral, seen only by the caller), built
//! from a few store reads and at most one engine command that does not wait on a turn, so it is
//! well inside Slack's 3 s; every command, refused or not, leaves one `chat_command` audit record;
//! a refusal says why. The automation commands live in `automations.rs`, the settings command in
//! `settings.rs`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use workmate_adapter::{ChatCommand, USAGE, parse_command};
use workmate_engine::Scheduler;
use workmate_engine::reply_token;
use workmate_protocol::{Actor, Command, SessionId, Surface, TenantId, UserId};
use workmate_slack::{SlashCommand, decode_slash_command};
use workmate_store::{
    InboxFilter, InboxItemState, NewAuditRecord, NewUser, Role, SessionKey, SessionRecord, User,
    utc_day,
};

use super::routes::{configured, verified};
use super::{SlackError, SlackSurface};
use crate::http::{ApiError, AppState};

/// Inbox lines shown at most.
const INBOX_LINES: usize = 20;

/// What a command came to, for the reply and the audit record.
pub(super) struct Outcome {
    /// `ok`, `refused` or `invalid`.
    status: &'static str,
    text: String,
    session: Option<SessionId>,
}

impl Outcome {
    pub(super) fn ok(text: impl Into<String>) -> Self {
        Self {
            status: "ok",
            text: text.into(),
            session: None,
        }
    }

    pub(super) fn refused(text: impl Into<String>) -> Self {
        Self {
            status: "refused",
            text: text.into(),
            session: None,
        }
    }

    fn in_session(mut self, session: &SessionId) -> Self {
        self.session = Some(session.clone());
        self
    }
}

/// Who typed the command, where.
pub(super) struct Caller {
    pub(super) tenant: TenantId,
    pub(super) user: User,
    /// The Slack user id (`U…`) who typed the command.
    pub(super) slack_user: String,
    channel: String,
    name: Option<String>,
}

impl Caller {
    fn actor(&self) -> Actor {
        let mut actor = Actor::new(self.user.id.clone());
        actor.name = self.name.clone();
        actor
    }

    fn is_admin(&self) -> bool {
        self.user.role == Role::Admin
    }
}

fn api(error: SlackError) -> ApiError {
    match error {
        SlackError::Store(e) => e.into(),
        SlackError::Engine(e) => e.into(),
        SlackError::Web(e) => ApiError::Internal(e.to_string()),
    }
}

/// The slash command route.
pub(crate) async fn slash_commands(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let slack = configured(&state)?;
    verified(&slack, &headers, &body)?;
    let command = decode_slash_command(&body).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    // Runs by hand need the scheduler, which the app state holds.
    let text = slack
        .command_reply(&command, Some(&state.scheduler))
        .await?;
    Ok(Json(json!({"response_type": "ephemeral", "text": text})).into_response())
}

impl SlackSurface {
    /// Runs a slash command (HTTP and Socket Mode alike), audits it, and returns the reply text.
    /// `scheduler` starts runs by hand (`automations run`); without it that command is refused.
    pub(super) async fn command_reply(
        &self,
        command: &SlashCommand,
        scheduler: Option<&Scheduler>,
    ) -> Result<String, ApiError> {
        let caller = self.caller(command).await?;
        let (name, outcome) = match parse_command(&command.text) {
            Ok(parsed) => (parsed.name(), self.run(&caller, parsed, scheduler).await?),
            Err(error) => (
                "invalid",
                Outcome {
                    status: "invalid",
                    text: error.to_string(),
                    session: None,
                },
            ),
        };
        let record = NewAuditRecord {
            session_id: outcome.session.clone(),
            actor: Some(caller.user.id.as_str().to_owned()),
            stage: "chat_command".into(),
            tool: None,
            status: Some(outcome.status.into()),
            detail: json!({"command": name, "outcome": outcome.status, "via": "slack"}),
        };
        self.hub
            .store()
            .audit()
            .append(&caller.tenant, &record)
            .await?;
        Ok(outcome.text)
    }

    async fn caller(&self, command: &SlashCommand) -> Result<Caller, ApiError> {
        let tenant = self.ensure_tenant(&command.team_id).await.map_err(api)?;
        let name = command.user_name.clone();
        let id = self
            .user(&tenant, &command.user_id, name.as_deref())
            .await
            .map_err(api)?;
        let user = self
            .hub
            .store()
            .tenants()
            .get_user(&tenant, &id)
            .await?
            .ok_or_else(|| ApiError::Internal(format!("user {id} vanished")))?;
        Ok(Caller {
            tenant,
            user,
            slack_user: command.user_id.clone(),
            channel: command.channel_id.clone(),
            name,
        })
    }

    async fn run(
        &self,
        caller: &Caller,
        command: ChatCommand,
        scheduler: Option<&Scheduler>,
    ) -> Result<Outcome, ApiError> {
        Ok(match command {
            ChatCommand::Help => Outcome::ok(help()),
            ChatCommand::Whoami => Outcome::ok(format!(
                "You are {} ({}), {} in tenant {}.",
                caller.user.id,
                caller.user.display_name,
                role_name(caller.user.role),
                caller.tenant
            )),
            ChatCommand::Mode(mode) => {
                self.on_session(caller, |session| match mode {
                    None => Change::Show(format!("mode is {}", session.mode.as_str())),
                    Some(mode) => Change::Apply(
                        Command::SetMode {
                            mode,
                            actor: caller.actor(),
                        },
                        format!("mode set to {}", mode.as_str()),
                    ),
                })
                .await?
            }
            ChatCommand::Model(model) => {
                self.on_session(caller, |session| match model {
                    None => Change::Show(format!("model is {}", session.model)),
                    Some(model) => Change::Apply(
                        Command::SwitchModel {
                            model: model.clone(),
                            actor: caller.actor(),
                        },
                        format!("model set to {model}"),
                    ),
                })
                .await?
            }
            ChatCommand::Stop => {
                self.on_session(caller, |_| {
                    Change::Apply(
                        Command::Interrupt {
                            actor: caller.actor(),
                        },
                        "asked the running turn (if any) to stop".into(),
                    )
                })
                .await?
            }
            ChatCommand::Inbox => self.inbox(caller).await?,
            ChatCommand::Automations => self.automations(caller).await?,
            ChatCommand::Automation { action, id } => {
                self.automation(caller, action, &id, scheduler).await?
            }
            ChatCommand::Rules => self.rules(caller).await?,
            ChatCommand::RulesRevoke(entry) => self.revoke_rule(caller, &entry).await?,
            ChatCommand::Usage => self.usage(caller).await?,
            ChatCommand::Settings(change) => self.settings(caller, change).await?,
            ChatCommand::RoleGrant { user, role } => self.grant(caller, &user, role).await?,
            ChatCommand::RoleRevoke { user, role } => self.revoke(caller, &user, role).await?,
            _ => Outcome::refused(format!("This command is not available on Slack.\n{USAGE}")),
        })
    }

    /// Applies a session command to the channel-level session, for its owner or an admin.
    async fn on_session(
        &self,
        caller: &Caller,
        change: impl FnOnce(&SessionRecord) -> Change,
    ) -> Result<Outcome, ApiError> {
        let key = SessionKey {
            surface: Surface::Slack,
            chat_id: caller.channel.clone(),
            thread_id: String::new(),
        };
        let store = self.hub.store();
        let Some(session) = store.sessions().find_by_key(&caller.tenant, &key).await? else {
            return Ok(Outcome::refused(
                "No session in this channel yet. Slash commands carry no thread, so they act on \
                 the channel's own session (the one a direct message starts).",
            ));
        };
        let scope = "the channel-level session (slash commands carry no thread)";
        let (command, done) = match change(&session) {
            Change::Show(text) => {
                return Ok(Outcome::ok(format!("In {scope}, {text}.")).in_session(&session.id));
            }
            Change::Apply(command, done) => (command, done),
        };
        if session.owner != caller.user.id && !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only the session's owner ({}) or an admin may do that; you are {}.",
                session.owner,
                role_name(caller.user.role)
            ))
            .in_session(&session.id));
        }
        let outcome = match self.hub.submit(&caller.tenant, &session.id, command).await {
            Ok(_) => Outcome::ok(format!("In {scope}, {done}.")),
            Err(
                e @ (workmate_engine::Error::Busy(_)
                | workmate_engine::Error::Forbidden(_)
                | workmate_engine::Error::Rejected(_)),
            ) => Outcome::refused(format!("Refused: {e}.")),
            Err(e) => return Err(e.into()),
        };
        Ok(outcome.in_session(&session.id))
    }

    /// The caller's pending items: in sessions they own, or all of them for approvers and admins.
    async fn inbox(&self, caller: &Caller) -> Result<Outcome, ApiError> {
        let store = self.hub.store();
        let filter = InboxFilter {
            state: Some(InboxItemState::Pending),
            ..InboxFilter::default()
        };
        let items = store.inbox().list(&caller.tenant, &filter, 500).await?;
        let everything = caller.user.role != Role::Member;
        let mut owners: HashMap<SessionId, Option<UserId>> = HashMap::new();
        let mut lines = Vec::new();
        for item in items {
            if !everything {
                let owner = match owners.get(&item.session_id) {
                    Some(owner) => owner.clone(),
                    None => {
                        let owner = store
                            .sessions()
                            .get(&caller.tenant, &item.session_id)
                            .await?
                            .map(|s| s.owner);
                        owners.insert(item.session_id.clone(), owner.clone());
                        owner
                    }
                };
                if owner.as_ref() != Some(&caller.user.id) {
                    continue;
                }
            }
            lines.push(format!("• {} {}", reply_token(&item.id), item.title));
        }
        if lines.is_empty() {
            return Ok(Outcome::ok("Nothing is waiting for you."));
        }
        let total = lines.len();
        let mut text =
            format!("{total} pending (answer in its thread, or reply quoting the token):");
        for line in lines.iter().take(INBOX_LINES) {
            let _ = write!(text, "\n{line}");
        }
        if total > INBOX_LINES {
            let _ = write!(text, "\n… and {} more", total - INBOX_LINES);
        }
        Ok(Outcome::ok(text))
    }

    async fn usage(&self, caller: &Caller) -> Result<Outcome, ApiError> {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        let day = utc_day(now_ms);
        let usage = self.hub.store().usage();
        let mine = usage
            .tokens_on_day(&caller.tenant, Some(&caller.user.id), &day)
            .await?;
        let mut text = format!("Today ({day} UTC) you used {mine} tokens.");
        if caller.is_admin() {
            let all = usage.tokens_on_day(&caller.tenant, None, &day).await?;
            let _ = write!(text, " The tenant used {all}.");
        }
        Ok(Outcome::ok(text))
    }

    async fn grant(&self, caller: &Caller, target: &str, role: Role) -> Result<Outcome, ApiError> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins may grant roles; you are {}.",
                role_name(caller.user.role)
            )));
        }
        let user = self.target(caller, target).await?;
        if user.role == role {
            return Ok(Outcome::ok(format!(
                "{} is already {}.",
                user.id,
                role_name(role)
            )));
        }
        if user.role == Role::Admin && !self.other_admins(caller, &user).await? {
            return Ok(Outcome::refused(format!(
                "{} is the last admin; grant admin to someone else first.",
                user.id
            )));
        }
        self.set_role(caller, &user, role).await?;
        Ok(Outcome::ok(format!(
            "{} is now {}.",
            user.id,
            role_name(role)
        )))
    }

    async fn revoke(&self, caller: &Caller, target: &str, role: Role) -> Result<Outcome, ApiError> {
        if !caller.is_admin() {
            return Ok(Outcome::refused(format!(
                "Only admins may revoke roles; you are {}.",
                role_name(caller.user.role)
            )));
        }
        let user = self.target(caller, target).await?;
        if user.role != role {
            return Ok(Outcome::refused(format!(
                "{} is not {} (they are {}).",
                user.id,
                role_name(role),
                role_name(user.role)
            )));
        }
        if role == Role::Admin && !self.other_admins(caller, &user).await? {
            return Ok(Outcome::refused(format!(
                "{} is the last admin; a tenant always keeps one.",
                user.id
            )));
        }
        self.set_role(caller, &user, Role::Member).await?;
        Ok(Outcome::ok(format!("{} is now a member.", user.id)))
    }

    /// The tenant user a command names (a Slack id; made a member if new).
    async fn target(&self, caller: &Caller, slack_user: &str) -> Result<User, ApiError> {
        let id = self
            .user(&caller.tenant, slack_user, None)
            .await
            .map_err(api)?;
        self.hub
            .store()
            .tenants()
            .get_user(&caller.tenant, &id)
            .await?
            .ok_or_else(|| ApiError::Internal(format!("user {id} vanished")))
    }

    /// Whether an admin other than `user` remains.
    async fn other_admins(&self, caller: &Caller, user: &User) -> Result<bool, ApiError> {
        let admins = self
            .hub
            .store()
            .tenants()
            .users_with_role(&caller.tenant, Role::Admin)
            .await?;
        Ok(admins.iter().any(|a| a.id != user.id))
    }

    async fn set_role(&self, caller: &Caller, user: &User, role: Role) -> Result<(), ApiError> {
        let new = NewUser {
            id: user.id.clone(),
            display_name: user.display_name.clone(),
            email: user.email.clone(),
            role,
            sso_subject: user.sso_subject.clone(),
        };
        self.hub
            .store()
            .tenants()
            .upsert_user(&caller.tenant, &new)
            .await?;
        Ok(())
    }
}

/// What a session command does once the session is known.
enum Change {
    /// Only report (any caller may look).
    Show(String),
    /// Submit the command; the text says what was done.
    Apply(Command, String),
}

pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Member => "member",
        Role::Approver => "approver",
        Role::Admin => "admin",
    }
}

fn help() -> String {
    [
        "/workmate commands (only you see the answers):",
        "• help: this list",
        "• whoami: your user id, role and tenant",
        "• mode [discuss|plan|interactive|auto|custom]: show or set the channel session's mode",
        "• model [provider:model]: show or set the channel session's model",
        "• stop: stop the channel session's running turn",
        "• inbox: your pending approvals and questions",
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
        "mode, model and stop act on the channel-level session (slash commands carry no thread); \
         changing it takes its owner or an admin.",
    ]
    .join("\n")
}
