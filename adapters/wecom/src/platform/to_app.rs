//! Cards as self-built-app messages: what [`WeComPlatform`] does for a message that came to the
//! app ([`ReplyHandle::app`]).
//!
//! An app message cannot be edited, so a turn card is sent once, when nothing more is to come,
//! as markdown messages of at most [`MAX_APP_MARKDOWN_BYTES`]; a prompt is a template card,
//! which a click's answer updates through its `response_code` (see [`crate::dispatch_app`]);
//! once the prompt is settled, a person who did not click their card is told how in a short
//! message below it.
//!
//! Invariant: a card is sent at most once by this process (a card completed just before a
//! restart may be sent again by the next).

use serde_json::{Value, json};
use workmate_adapter::{AdapterError, ChatTarget, PostedCard};

use super::{WeComPlatform, stream_part};
use crate::card::split_stream;

/// Bytes of an app markdown message's `content`.
pub const MAX_APP_MARKDOWN_BYTES: usize = 2_048;
/// The message id prefix of a turn card sent (or to be sent) as app messages.
const APP_PREFIX: &str = "app:";
/// The message id prefix of a prompt sent as an app template card (then its task id).
const APP_CARD_PREFIX: &str = "appcard:";

fn settled_key(user: &str, task: &str) -> String {
    format!("settled:{user}:{task}")
}

/// What a person who did not click a settled prompt's card is told: its first line (what was
/// asked) and its last (how it was settled: "✅ Approved by Bea · once").
fn settled_note(markdown: &str) -> String {
    let mut lines = markdown.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    match lines.next_back() {
        Some(last) => format!("{first}\n{last}"),
        None => first.to_owned(),
    }
}

impl WeComPlatform {
    /// Posts a card to the person `target` names.
    pub(super) async fn app_post(
        &self,
        target: &ChatTarget,
        rendered: &Value,
    ) -> Result<PostedCard, AdapterError> {
        let app = self.app()?;
        let message_id = if let Some(card) = rendered.get("template_card") {
            let message = json!({ "msgtype": "template_card", "template_card": card });
            app.send(&target.chat_id, message).await?;
            let task = card.get("task_id").and_then(Value::as_str).unwrap_or("");
            format!("{APP_CARD_PREFIX}{task}")
        } else {
            let message_id = format!("{APP_PREFIX}{}", uuid_like());
            self.app_complete(&target.chat_id, &message_id, rendered)
                .await?;
            message_id
        };
        Ok(PostedCard {
            chat_id: target.chat_id.clone(),
            message_id,
        })
    }

    /// Whether a posted card is an app message.
    pub(super) fn is_app_message(posted: &PostedCard) -> bool {
        posted.message_id.starts_with(APP_PREFIX)
    }

    /// Whether a posted card is a prompt sent as an app template card.
    pub(super) fn is_app_card(posted: &PostedCard) -> bool {
        posted.message_id.starts_with(APP_CARD_PREFIX)
    }

    /// Records whether `user`'s app template card `task` is (or will be) updated by the answer
    /// to their own click, which shows them how it was settled.
    pub fn settled_by_click(&self, task: &str, user: &str, yes: bool) {
        let key = settled_key(user, task);
        if yes {
            self.sent.insert(key, ());
        } else {
            self.sent.invalidate(&key);
        }
    }

    /// An app template card's prompt was settled: WeCom lets a card change only in the answer to
    /// a click on it, so a person who did not click their copy is told in a message below it
    /// (the prompt's title and how it was settled), once.
    pub(super) async fn app_card_settled(
        &self,
        posted: &PostedCard,
        rendered: &Value,
    ) -> Result<(), AdapterError> {
        let (markdown, more) = stream_part(rendered);
        let task = posted.message_id.trim_start_matches(APP_CARD_PREFIX);
        let key = settled_key(&posted.chat_id, task);
        if more || markdown.is_empty() || self.sent.contains_key(&key) {
            return Ok(());
        }
        self.send_app_markdown(&posted.chat_id, &settled_note(&markdown))
            .await?;
        self.sent.insert(key, ());
        Ok(())
    }

    /// Sends a turn card once it is complete, once.
    pub(super) async fn app_complete(
        &self,
        user: &str,
        message_id: &str,
        rendered: &Value,
    ) -> Result<(), AdapterError> {
        let (markdown, more) = stream_part(rendered);
        if more || self.sent.contains_key(message_id) {
            return Ok(());
        }
        self.send_app_markdown(user, &markdown).await?;
        self.sent.insert(message_id.to_owned(), ());
        Ok(())
    }

    /// Sends markdown to a person as app messages, in as many as it takes.
    pub async fn send_app_markdown(&self, user: &str, markdown: &str) -> Result<(), AdapterError> {
        let app = self.app()?;
        for part in split_stream(markdown, MAX_APP_MARKDOWN_BYTES) {
            let message = json!({ "msgtype": "markdown", "markdown": { "content": part } });
            app.send(user, message).await?;
        }
        Ok(())
    }

    pub(super) fn app(&self) -> Result<&crate::app::AppWeb, AdapterError> {
        self.app.as_ref().ok_or_else(|| {
            AdapterError::Rejected(
                "a message came to WeCom's self-built app, but no app is configured to answer \
                 (set agent_id and secret in [platforms.wecom])"
                    .into(),
            )
        })
    }
}

/// A fresh id, unique enough for one process's messages.
fn uuid_like() -> String {
    format!(
        "{:016x}{:016x}",
        workmate_adapter::backoff::random_u64(),
        workmate_adapter::backoff::random_u64()
    )
}
