//! The contract a chat platform implements.
//!
//! An adapter is a mapper: card IR in, platform JSON out, and the two HTTP calls that put a card
//! in a chat and change it in place. Pacing, retries, dedupe and persistence are not its business;
//! the toolkit does them the same way for every platform.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;
use workmate_cards::Card;
use workmate_protocol::Surface;

use crate::ChatPlatform;

/// A boxed, sendable future: the trait stays object-safe without the async-trait crate.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a new card goes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChatTarget {
    /// The platform's chat (Slack channel, Feishu chat, WeCom chat, DingTalk conversation).
    pub chat_id: String,
    /// The thread to reply in (Slack `thread_ts`, Feishu root message), if any.
    pub thread_id: Option<String>,
    /// The newest delivery's answer handle ([`crate::Inbound::reply`]), for platforms that
    /// answer a message only through it; `None` elsewhere, and after a restart.
    pub reply: Option<String>,
    /// In a group without threads, the person (platform user id) whose own conversation this
    /// is: a platform that can mention people in what it posts mentions them, so a busy group
    /// can tell answers apart. `None` in threads, direct chats and shared conversations.
    pub person: Option<String>,
}

impl ChatTarget {
    /// A chat, outside any thread.
    pub fn chat(chat_id: impl Into<String>) -> Self {
        Self {
            chat_id: chat_id.into(),
            thread_id: None,
            reply: None,
            person: None,
        }
    }
}

/// A card that was posted: what an update needs to find it again.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PostedCard {
    /// The chat it is in.
    pub chat_id: String,
    /// The platform's id of the message (Slack `ts`, Feishu `message_id`, DingTalk `outTrackId`).
    pub message_id: String,
}

/// What a post knows about earlier attempts to post the same card, so that a post repeated
/// after a timeout or a crash never leaves a second message in the chat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posting {
    /// The card's post key: the same for every attempt to post this card, in any process. A
    /// platform that can make a post idempotent, or find it again, uses it (Feishu's `uuid`,
    /// Slack's message metadata, DingTalk's `outTrackId`).
    pub key: String,
    /// The id [`ChatAdapter::reserve`] gave the card before it was posted, on a platform that
    /// gives one.
    pub reserved: Option<PostedCard>,
    /// Whether an earlier attempt may have reached the platform (a process died, or a call timed
    /// out, after it started): the post must then not make a second message.
    pub again: bool,
}

impl Posting {
    /// A first post under `key`, with no id reserved.
    pub fn first(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            reserved: None,
            again: false,
        }
    }
}

/// How a platform call failed; the variant decides whether and when it is retried.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// HTTP 429 or a platform's rate-limit code: retry no sooner than `retry_after`.
    #[error("rate limited; retry after {retry_after:?}")]
    RateLimited {
        /// The platform's `Retry-After` (or its documented wait when it sends none).
        retry_after: Duration,
    },
    /// A 5xx, a timeout or a connection failure: retry with backoff.
    #[error("transient failure: {0}")]
    Transient(String),
    /// The platform refused the request (bad payload, missing scope, message gone): retrying the
    /// same request cannot succeed.
    #[error("rejected: {0}")]
    Rejected(String),
}

/// One chat platform, as the shared plumbing sees it.
pub trait ChatAdapter: Send + Sync + Debug {
    /// The platform's fixed facts: its surface, name, targets and redelivery window.
    fn describe(&self) -> &'static ChatPlatform;

    /// The platform, as stored with intake rows and card messages.
    fn surface(&self) -> Surface {
        self.describe().surface
    }

    /// The platform's card JSON for `card`, within the platform's size limits.
    fn render(&self, card: &Card) -> Value;

    /// Posts a new card message, as `posting` says (see [`Posting`]).
    fn post<'a>(
        &'a self,
        target: &'a ChatTarget,
        rendered: &'a Value,
        posting: &'a Posting,
    ) -> BoxFuture<'a, Result<PostedCard, AdapterError>>;

    /// Gives the card the id it will have before anything is shown, on a platform where the
    /// caller can know it in advance (a Feishu card entity, a DingTalk `outTrackId`), so it is
    /// stored before the post and a post cut short is finished in the same message. `None`
    /// (the default) where the id comes only with the post.
    fn reserve<'a>(
        &'a self,
        _target: &'a ChatTarget,
        _rendered: &'a Value,
        _key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        Box::pin(async { Ok(None) })
    }

    /// Looks in `target` for the message an earlier post of the card `key` made, when the
    /// process that posted it died before storing its id (Slack: by the message's metadata).
    /// `None` when there is none, or (the default) when the platform cannot tell: the card is
    /// then posted.
    fn find_posted<'a>(
        &'a self,
        _target: &'a ChatTarget,
        _key: &'a str,
    ) -> BoxFuture<'a, Result<Option<PostedCard>, AdapterError>> {
        Box::pin(async { Ok(None) })
    }

    /// Replaces a posted card's content. `version` grows strictly with every call for one card,
    /// across processes (Feishu rejects a sequence that is not larger than the last).
    fn update<'a>(
        &'a self,
        posted: &'a PostedCard,
        rendered: &'a Value,
        version: i64,
    ) -> BoxFuture<'a, Result<(), AdapterError>>;

    /// The least time between two updates of one message the platform tolerates.
    fn min_update_interval(&self) -> Duration;

    /// The longest answer, in bytes of its markdown, that one card shows; a longer answer is
    /// shown as several cards, one below the other, so none is cut at the platform's size
    /// limit. No limit by default.
    fn answer_budget(&self) -> usize {
        usize::MAX
    }

    /// Where a card goes to reach `user` (a platform user id) in their own direct chat with the
    /// bot, to be posted and updated like any card; `None` where the platform cannot post a card
    /// there on its own (the WeCom smart robot).
    fn direct_target(&self, _user: &str) -> Option<ChatTarget> {
        None
    }

    /// Whether a message in a group can be answered in a thread of its own (Slack, Feishu). On
    /// a platform without threads (WeCom, DingTalk) the chat layer gives each person their own
    /// conversation in a group, and [`ChatTarget::person`] says whose.
    fn has_threads(&self) -> bool {
        true
    }
}
