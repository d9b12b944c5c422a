//! [`FeishuPlatform`]: the chat layer's calls, on Feishu.
//!
//! - Every card is a CardKit card entity, sent as a message that replies in the delivery's
//!   thread; [`PostedCard::message_id`] is the entity's `card_id`, which updates address.
//! - A card with a Stop button streams (`streaming_mode`); while only its text grows, updates set
//!   that element's content; otherwise the whole card is replaced, and streaming is closed when
//!   the card stops running. Each call's `sequence` derives from the chat layer's update version,
//!   which grows strictly per card across processes: version `v` uses `2v` and `2v + 1`.
//! - Feishu ends a card's streaming mode by itself after 10 minutes and then drops element
//!   updates without an error. A card that has streamed for [`STREAMING_BUDGET`] is therefore
//!   closed for streaming and updated whole from then on (still at most every
//!   [`MIN_UPDATE_INTERVAL`]), so a long turn's card never freezes.
//! - A reply whose target message was recalled is sent to the chat instead, with the same
//!   idempotency key, so it is never posted twice.
//! - Private notices are direct messages from the bot (Feishu's "only you can see" cards fail in
//!   topic groups and direct chats).

mod diff;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use workmate_adapter::{
    AdapterError, BoxFuture, ChatAdapter, ChatPlatform, ChatTarget, Downloaded, InboundFile,
    PROFILE_LOOKUP, Platform, PostedCard, Posting, Profile, bounded_profile,
};
use workmate_cards::Card;

use crate::card;
use crate::web::{FeishuWeb, ReceiveIdType, WebError};
use diff::Change;

/// The least time between two updates of one card: CardKit takes 10 operations a second per
/// card, and one update makes at most two.
const MIN_UPDATE_INTERVAL: Duration = Duration::from_millis(300);
/// Cards whose last rendered state is remembered, to stream only what changed.
const REMEMBERED_CARDS: u64 = 1_024;
/// How long a card streams before workmate closes streaming itself: a minute inside the
/// 10 minutes after which Feishu closes it and silently drops further element updates.
pub(crate) const STREAMING_BUDGET: Duration = Duration::from_secs(9 * 60);
/// The most answer text one card shows, in bytes: with the status line, the steps and the
/// escaping Card JSON needs it stays well inside the 30 KB a card may have (4,000 characters of
/// Chinese, 12,000 of English); a longer answer goes on in the next card.
const ANSWER_BUDGET: usize = 12_000;
/// Feishu's code for "the message replied to was withdrawn or deleted".
const REPLY_TARGET_GONE: [i64; 2] = [230_011, 231_003];

/// Feishu, for the chat layer.
#[derive(Debug)]
pub struct FeishuPlatform {
    web: Arc<FeishuWeb>,
    /// The last state sent of recent cards, by `card_id`.
    last: moka::sync::Cache<String, Arc<Sent>>,
    /// How long a card may stream.
    streaming_budget: Duration,
}

/// A card as last sent.
#[derive(Debug)]
struct Sent {
    card: Value,
    /// Since when it streams (unknown after a restart: counted from the first update then).
    streaming_since: Option<Instant>,
}

impl FeishuPlatform {
    /// The platform over a client.
    pub fn new(web: Arc<FeishuWeb>) -> Self {
        Self {
            web,
            last: moka::sync::Cache::new(REMEMBERED_CARDS),
            streaming_budget: STREAMING_BUDGET,
        }
    }

    /// The same platform with another streaming budget (tests).
    #[must_use]
    pub fn with_streaming_budget(mut self, budget: Duration) -> Self {
        self.streaming_budget = budget;
        self
    }

    /// The client.
    pub fn web(&self) -> &Arc<FeishuWeb> {
        &self.web
    }

    /// Sends `content` of `msg_type` into `target`'s thread (or the chat), once per `uuid`.
    pub async fn send_to(
        &self,
        target: &ChatTarget,
        msg_type: &str,
        content: &Value,
        uuid: &str,
    ) -> Result<String, WebError> {
        if let Some(root) = target.thread_id.as_deref().filter(|r| !r.is_empty()) {
            match self.web.reply_message(root, msg_type, content, uuid).await {
                Err(e) if e.code().is_some_and(|c| REPLY_TARGET_GONE.contains(&c)) => {
                    tracing::info!("The message replied to is gone; sending to the chat instead.");
                }
                other => return other,
            }
        }
        let id_type = if target.chat_id.starts_with("ou_") {
            ReceiveIdType::OpenId
        } else {
            ReceiveIdType::ChatId
        };
        self.web
            .send_message(id_type, &target.chat_id, msg_type, content, uuid)
            .await
    }

    /// Sends a card as a direct message to one person.
    pub async fn direct_card(&self, user: &str, card: &Card) -> Result<String, WebError> {
        let rendered = card::render(card);
        let uuid = key_of(&[user, &rendered.to_string()]);
        self.web
            .send_message(ReceiveIdType::OpenId, user, "interactive", &rendered, &uuid)
            .await
    }

    async fn apply(&self, card_id: &str, next: &Value, version: i64) -> Result<(), WebError> {
        let last = self.last.get(card_id);
        let now = Instant::now();
        let since = last.as_ref().and_then(|l| l.streaming_since).unwrap_or(now);
        // Past the budget the card is sent as not streaming: streaming is closed once, then every
        // change replaces the whole card.
        let expired = diff::streaming(next) && now.duration_since(since) >= self.streaming_budget;
        let next = if expired {
            &diff::without_streaming(next)
        } else {
            next
        };
        let sequence = version.saturating_mul(2);
        match diff::change(last.as_ref().map(|l| &l.card), next) {
            Change::Nothing => {}
            Change::Element { id, content } => {
                self.web
                    .stream_element(card_id, &id, &content, sequence)
                    .await?;
            }
            Change::Whole { close_streaming } => {
                if close_streaming {
                    self.web.set_streaming(card_id, false, sequence).await?;
                }
                self.web.update_card(card_id, next, sequence + 1).await?;
            }
        }
        let streaming_since = (diff::streaming(next) || expired).then_some(since);
        self.last.insert(
            card_id.to_owned(),
            Arc::new(Sent {
                card: next.clone(),
                streaming_since,
            }),
        );
        Ok(())
    }
}

/// A stable idempotency key for what is being sent.
fn key_of(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hex::encode(&hash.finalize()[..16])
}

impl ChatAdapter for FeishuPlatform {
    fn describe(&self) -> &'static ChatPlatform {
        &crate::FEISHU
    }

    fn render(&self, card: &Card) -> Value {
        card::render(card)
    }

    /// The card entity is made first: its id is the card's, known before any message shows it.
    fn reserve<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        _key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        Box::pin(async move {
            let card_id = self.web.create_card(rendered).await?;
            Ok(Some(PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: card_id,
            }))
        })
    }

    /// Sends the message that shows the reserved card entity, with the post key as its `uuid`:
    /// Feishu sends at most one message per `uuid` within an hour, so a post repeated after a
    /// crash or a timeout shows no second card.
    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>> {
        Box::pin(async move {
            let card_id = match &posting.reserved {
                Some(reserved) => reserved.message_id.clone(),
                None => self.web.create_card(rendered).await?,
            };
            let content = json!({ "type": "card", "data": { "card_id": card_id } });
            self.send_to(target, "interactive", &content, &posting.key)
                .await?;
            if posting.again {
                // The card was made by an earlier attempt, maybe in a process that died: what it
                // shows is not known here, so the next update sends it whole.
                self.last.invalidate(&card_id);
            } else {
                self.last.insert(
                    card_id.clone(),
                    Arc::new(Sent {
                        card: rendered.clone(),
                        streaming_since: diff::streaming(rendered).then(Instant::now),
                    }),
                );
            }
            Ok(PostedCard {
                chat_id: target.chat_id.clone(),
                message_id: card_id,
            })
        })
    }

    /// An `open_id` as the chat sends to the person directly.
    fn direct_target(&self, user: &str) -> Option<ChatTarget> {
        user.starts_with("ou_").then(|| ChatTarget::chat(user))
    }

    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move { Ok(self.apply(&posted.message_id, rendered, version).await?) })
    }

    fn min_update_interval(&self) -> Duration {
        MIN_UPDATE_INTERVAL
    }

    fn answer_budget(&self) -> usize {
        ANSWER_BUDGET
    }
}

impl Platform for FeishuPlatform {
    fn download<'a>(
        &'a self,
        file: &'a InboundFile,
        max_bytes: u64,
    ) -> BoxFuture<'a, Result<Downloaded, AdapterError>> {
        Box::pin(async move {
            let mut parts = file.handle.splitn(3, '|');
            let (Some(message), Some(key), Some(kind)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(AdapterError::Rejected(format!(
                    "{} has no Feishu message resource to fetch",
                    file.name
                )));
            };
            self.web
                .message_resource(message, key, kind, max_bytes, &file.name)
                .await
        })
    }

    fn profile<'a>(&'a self, user: &'a str) -> BoxFuture<'a, Profile> {
        Box::pin(async move {
            let lookup = async {
                let (name, email) = self.web.user_contact(user).await?;
                Ok::<_, WebError>(Profile {
                    name,
                    time_zone: None,
                    email,
                })
            };
            bounded_profile(PROFILE_LOOKUP, lookup, "the contact API").await
        })
    }

    fn notice<'a>(
        &'a self,
        target: &'a ChatTarget,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            let content = json!({ "text": text });
            let uuid = key_of(&[
                &target.chat_id,
                target.thread_id.as_deref().unwrap_or(""),
                text,
            ]);
            self.send_to(target, "text", &content, &uuid).await?;
            Ok(())
        })
    }

    fn private_notice<'a>(
        &'a self,
        _target: &'a ChatTarget,
        user: &'a str,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), AdapterError>> {
        Box::pin(async move {
            self.direct_card(user, card).await?;
            Ok(())
        })
    }

    fn cached_items(&self) -> Vec<(&'static str, u64)> {
        vec![("feishu_card_states", self.last.entry_count())]
    }
}
