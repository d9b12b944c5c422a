//! The work behind an acknowledged Slack request: identities, sessions, commands, resolutions.
//!
//! Invariant: a job runs after Slack was answered, so it reports failures in the log (and, for a
//! refused click, to the clicker), never to Slack's request.

use std::sync::Arc;

use tracing::{debug, info, warn};
use workmate_adapter::{ChatTarget, Job, SLACK, dedupe_ttl, first_delivery};
use workmate_cards::ButtonAction;
use workmate_protocol::{Actor, AutomationId, Command, Surface, TenantId, UserId};
use workmate_slack::{BlockActions, MessageEvent, UserInfo, blocks::decode_button_value};
use workmate_store::{NewSession, NewUser, ResolveOutcome, Role, SessionKey, SessionRecord};
use workmate_tools::automations::AutomationSettings;

use super::{SlackError, SlackSurface};

/// The tenant of a Slack workspace.
pub fn tenant_of(team: &str) -> TenantId {
    TenantId::from(format!("slack-{team}"))
}

/// The text without the leading mention of the bot (of anyone, if the bot's id is unknown).
fn strip_mention(text: &str, bot_user: Option<&str>) -> String {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<@")
        && let Some((id, after)) = rest.split_once('>')
        && bot_user.is_none_or(|bot| id.split('|').next() == Some(bot))
    {
        return after.trim().to_owned();
    }
    trimmed.trim_end().to_owned()
}

/// Why a message was not taken, in words for the person who sent it (details stay in the log).
fn not_taken_reason(error: &SlackError) -> &'static str {
    match error {
        SlackError::Engine(workmate_engine::Error::Busy(_)) => {
            "it was still finishing the previous one"
        }
        SlackError::Engine(workmate_engine::Error::ShuttingDown) => "it is restarting",
        _ => "an internal error; the details are in the service log",
    }
}

/// The longest wait for Slack to say who a user is.
const USER_INFO_LOOKUP: std::time::Duration = std::time::Duration::from_millis(800);

/// Attempts to hand a message to a session that is between turns.
const BUSY_RETRIES: usize = 20;
/// The pause between those attempts.
const BUSY_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

impl SlackSurface {
    pub(super) fn message_job(
        self: Arc<Self>,
        team: String,
        event_id: String,
        message: MessageEvent,
    ) -> Job {
        Box::pin(async move {
            if let Err(e) = self.on_message(&team, &event_id, &message).await {
                warn!(team = %team, event_id = %event_id, error = %e, "Cannot handle a Slack message.");
                self.say_not_taken(&message, not_taken_reason(&e)).await;
            }
        })
    }

    /// Tells the thread that a message was not taken, so nobody waits for an answer that will
    /// not come (Slack was acked already and will not deliver it again).
    async fn say_not_taken(&self, message: &MessageEvent, why: &str) {
        let Some(channel) = &message.channel else {
            return;
        };
        let text = format!(
            "⚠️ workmate could not take this message ({why}). Please send it again in a moment."
        );
        let blocks =
            serde_json::json!([{"type": "section", "text": {"type": "mrkdwn", "text": text}}]);
        let thread = Some(message.thread_root_ts());
        if let Err(e) = self.web.post_message(channel, thread, &blocks, &text).await {
            warn!(error = %e, "Cannot tell a Slack thread its message was not taken.");
        }
    }

    pub(super) fn click_job(self: Arc<Self>, actions: BlockActions) -> Job {
        Box::pin(async move {
            if let Err(e) = self.on_click(&actions).await {
                warn!(user = %actions.user.id, error = %e, "Cannot handle a Slack click.");
            }
        })
    }

    pub(super) async fn ensure_tenant(&self, team: &str) -> Result<TenantId, SlackError> {
        let tenant = tenant_of(team);
        self.hub
            .store()
            .tenants()
            .ensure(&tenant, &format!("Slack {team}"))
            .await?;
        Ok(tenant)
    }

    /// What Slack says about a user (`users.info`), or nothing when it does not answer quickly:
    /// callers fall back to ids and the tenant's zone rather than keep a person waiting.
    pub(super) async fn slack_user_info(&self, slack_user: &str) -> UserInfo {
        match tokio::time::timeout(USER_INFO_LOOKUP, self.web.user_info(slack_user)).await {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => {
                debug!(error = %e, "No answer from users.info.");
                UserInfo::default()
            }
            Err(_) => UserInfo::default(),
        }
    }

    /// The tenant user of a Slack user: bound before, or `slack-<user>` (a new member, named as
    /// Slack shows them).
    pub(super) async fn user(
        &self,
        tenant: &TenantId,
        slack_user: &str,
        name: Option<&str>,
    ) -> Result<UserId, SlackError> {
        let tenants = self.hub.store().tenants();
        if let Some(user) = tenants
            .user_for_platform_identity(tenant, SLACK, slack_user)
            .await?
        {
            return Ok(user);
        }
        let id = UserId::from(format!("slack-{slack_user}"));
        if tenants.get_user(tenant, &id).await?.is_none() {
            let looked_up = match name {
                Some(_) => None,
                None => self.slack_user_info(slack_user).await.name,
            };
            let new = NewUser {
                id: id.clone(),
                display_name: name
                    .map(str::to_owned)
                    .or(looked_up)
                    .unwrap_or_else(|| slack_user.to_owned()),
                email: None,
                role: Role::Member,
                sso_subject: None,
            };
            tenants.upsert_user(tenant, &new).await?;
        }
        Ok(tenants
            .bind_platform_identity(tenant, SLACK, slack_user, &id)
            .await?)
    }

    async fn on_message(
        &self,
        team: &str,
        event_id: &str,
        message: &MessageEvent,
    ) -> Result<(), SlackError> {
        let (Some(slack_user), Some(channel)) = (&message.user, &message.channel) else {
            return Ok(());
        };
        let tenant = self.ensure_tenant(team).await?;
        let store = self.hub.store();
        if !first_delivery(store, &tenant, SLACK, event_id, dedupe_ttl(SLACK))
            .await
            .map_err(|e| match e {
                workmate_adapter::Error::Store(e) => SlackError::Store(e),
                other => SlackError::Engine(workmate_engine::Error::Rejected(other.to_string())),
            })?
        {
            debug!(event_id, "Slack event already seen; ignored.");
            return Ok(());
        }
        let bot = self.bot().await;
        if let Some(bot) = bot
            && (Some(slack_user) == Some(&bot.user_id)
                || bot
                    .bot_id
                    .as_deref()
                    .is_some_and(|b| message.is_from_bot_id(b)))
        {
            return Ok(());
        }
        let text = strip_mention(&message.text, bot.map(|b| b.user_id.as_str()));
        if text.is_empty() {
            return Ok(());
        }
        let owner = self.user(&tenant, slack_user, None).await?;
        let thread = message.thread_root_ts().to_owned();
        let new = NewSession {
            key: SessionKey {
                surface: Surface::Slack,
                chat_id: channel.clone(),
                thread_id: thread.clone(),
            },
            owner: owner.clone(),
            title: None,
            persona: "cowork".into(),
            model: self.hub.config().default_model.clone(),
            mode: Default::default(),
            unattended: false,
        };
        let session = self.hub.create_session(&tenant, &new).await?;
        let target = ChatTarget {
            chat_id: channel.clone(),
            thread_id: Some(thread),
        };
        self.pumps.ensure(&tenant, &session.id, target).await?;
        let name = store
            .tenants()
            .get_user(&tenant, &owner)
            .await?
            .map(|u| u.display_name);
        let mut author = Actor::new(owner);
        author.name = name;
        let command = Command::UserMessage {
            author,
            text,
            attachments: Vec::new(),
        };
        // `Busy` only happens in the instant a turn is ending (too late to steer, not yet free):
        // try again briefly rather than lose the message.
        for _ in 0..BUSY_RETRIES {
            match self.hub.submit(&tenant, &session.id, command.clone()).await {
                Err(workmate_engine::Error::Busy(_)) => {
                    tokio::time::sleep(BUSY_PAUSE).await;
                }
                done => return done.map(drop).map_err(Into::into),
            }
        }
        info!(tenant = %tenant, session = %session.id, "Session stayed busy; telling the thread.");
        Err(workmate_engine::Error::Busy(session.id).into())
    }

    /// Where a session's cards are shown in Slack: its own thread, or, for an automation run,
    /// the thread its automation posts to (`None` when that is not a Slack thread).
    async fn cards_target(
        &self,
        session: &SessionRecord,
    ) -> Result<Option<ChatTarget>, SlackError> {
        match session.key.surface {
            Surface::Slack => Ok(Some(ChatTarget {
                chat_id: session.key.chat_id.clone(),
                thread_id: Some(session.key.thread_id.clone()).filter(|t| !t.is_empty()),
            })),
            Surface::Scheduler => {
                let automation = AutomationId::from(session.key.chat_id.clone());
                let found = self
                    .hub
                    .store()
                    .automations()
                    .get(&session.tenant_id, &automation)
                    .await?;
                let target = found.and_then(|a| AutomationSettings::from_json(&a.settings).target);
                Ok(target
                    .filter(|t| matches!(t.surface, Surface::Slack | Surface::Sandbox))
                    .map(|t| super::runs::chat_target(&t)))
            }
            _ => Ok(None),
        }
    }

    async fn on_click(&self, actions: &BlockActions) -> Result<(), SlackError> {
        let Some(team) = actions.team_id() else {
            return Ok(());
        };
        let tenant = self.ensure_tenant(team).await?;
        let clicker = &actions.user;
        let name = clicker.name.as_deref().or(clicker.username.as_deref());
        let user = self.user(&tenant, &clicker.id, name).await?;
        let mut actor = Actor::new(user);
        actor.name = name.map(str::to_owned);
        for action in &actions.actions {
            let Some(value) = &action.value else { continue };
            let Ok(ButtonAction::Resolve {
                item_id,
                resolution,
            }) = decode_button_value(value)
            else {
                warn!(action_id = %action.action_id, "A Slack button value that is not ours; ignored.");
                continue;
            };
            // The item's cards must be live to show the answer.
            let store = self.hub.store();
            if let Some(item) = store.inbox().get(&tenant, &item_id).await?
                && let Some(session) = store.sessions().get(&tenant, &item.session_id).await?
                && let Some(target) = self.cards_target(&session).await?
            {
                self.pumps.ensure(&tenant, &session.id, target).await?;
            }
            let refusal = match self
                .hub
                .resolve(&tenant, &item_id, &resolution, &actor, Surface::Slack)
                .await
            {
                Ok(ResolveOutcome::Resolved(_)) => None,
                Ok(ResolveOutcome::AlreadyResolved(_)) => {
                    Some("This was already answered.".to_owned())
                }
                Ok(_) => Some("This request no longer exists.".to_owned()),
                Err(workmate_engine::Error::Forbidden(why)) => Some(why),
                Err(e) => return Err(e.into()),
            };
            if let (Some(why), Some(channel)) = (refusal, actions.channel_id()) {
                let thread = actions
                    .message
                    .as_ref()
                    .and_then(|m| m.thread_ts.as_deref());
                self.web
                    .post_ephemeral(channel, thread, &clicker.id, &why)
                    .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::strip_mention;

    #[test]
    fn the_leading_bot_mention_is_removed() {
        assert_eq!(strip_mention("<@UBOT> say hi", Some("UBOT")), "say hi");
        assert_eq!(strip_mention("  <@UBOT|wm>  hi ", Some("UBOT")), "hi");
        assert_eq!(strip_mention("<@UX> hi", None), "hi");
        assert_eq!(strip_mention("<@UOTHER> hi", Some("UBOT")), "<@UOTHER> hi");
        assert_eq!(strip_mention("hi <@UBOT>", Some("UBOT")), "hi <@UBOT>");
    }
}
