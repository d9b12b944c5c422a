//! Events API bodies (`application/json`): the URL handshake and `event_callback` envelopes.
//!
//! Invariant: only `app_mention` and `message` events are typed; every other event type is kept
//! as [`Event::Other`] so that a new subscription never turns into a failed delivery (which Slack
//! would retry, and eventually disable the app for).

use serde::{Deserialize, Deserializer};

use super::{DecodeError, split_tag, variant};

/// Decodes an Events API request body.
pub fn decode_event_envelope(body: &[u8]) -> Result<EventEnvelope, DecodeError> {
    serde_json::from_slice(body).map_err(|source| DecodeError::Json {
        what: "Events API envelope",
        source,
    })
}

/// The outer object of an Events API request, by its `type`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EventEnvelope {
    /// Sent once when the Request URL is configured; answer 200 with `challenge`.
    UrlVerification {
        /// The string to echo back.
        challenge: String,
    },
    /// A subscribed event.
    EventCallback(Box<EventCallback>),
    /// Any other envelope (for example `app_rate_limited`); acknowledge and ignore.
    Other {
        /// The envelope's `type`.
        envelope_type: String,
    },
}

impl<'de> Deserialize<'de> for EventEnvelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Challenge {
            challenge: String,
        }
        let (tag, value) = split_tag(deserializer, "Events API envelope")?;
        Ok(match tag.as_str() {
            "url_verification" => Self::UrlVerification {
                challenge: variant::<Challenge, _>(value)?.challenge,
            },
            "event_callback" => Self::EventCallback(Box::new(variant(value)?)),
            _ => Self::Other { envelope_type: tag },
        })
    }
}

/// `type: "event_callback"`. Slack documents `team_id`, `event_id` and `event_time` as always
/// present; they are optional here so that a delivery lacking them is still acknowledged, and
/// the router decides (it dedupes on `event_id`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct EventCallback {
    /// Workspace the event happened in.
    pub team_id: Option<String>,
    /// The receiving app.
    pub api_app_id: Option<String>,
    /// Unique per event, stable across Slack's retries: the dedupe key.
    pub event_id: Option<String>,
    /// When the event happened, Unix seconds.
    pub event_time: Option<i64>,
    /// The event itself.
    pub event: Event,
}

/// The inner `event`, by its `type`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The app was @-mentioned in a channel.
    AppMention(MessageEvent),
    /// A message in a conversation the app is subscribed to (`message.im` for DMs; see
    /// [`MessageEvent::is_direct_message`]). Includes edits, deletions and bot posts, which carry
    /// a `subtype`.
    Message(MessageEvent),
    /// Any other event type.
    Other {
        /// The event's `type`.
        event_type: String,
    },
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (tag, value) = split_tag(deserializer, "event")?;
        Ok(match tag.as_str() {
            "app_mention" => Self::AppMention(variant(value)?),
            "message" => Self::Message(variant(value)?),
            _ => Self::Other { event_type: tag },
        })
    }
}

/// Fields shared by `app_mention` and `message` events.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct MessageEvent {
    /// Author's user id; absent for some subtypes (`message_changed`, `bot_message`).
    pub user: Option<String>,
    /// Message text in Slack's mrkdwn, mentions as `<@U…>`; empty when absent.
    #[serde(default)]
    pub text: String,
    /// Conversation id.
    pub channel: Option<String>,
    /// `im`, `mpim`, `channel` or `group` (message events only).
    pub channel_type: Option<String>,
    /// The message's own timestamp: with `channel`, its id.
    pub ts: String,
    /// Parent message when the message is in a thread.
    pub thread_ts: Option<String>,
    /// When the event was emitted.
    pub event_ts: Option<String>,
    /// Set when a bot (this app included) posted the message.
    pub bot_id: Option<String>,
    /// `bot_message`, `message_changed`, `message_deleted`, `thread_broadcast`, …
    pub subtype: Option<String>,
}

impl MessageEvent {
    /// Posted by any bot, this app included; reacting to these risks a loop.
    pub fn is_from_bot(&self) -> bool {
        self.bot_id.is_some() || self.subtype.as_deref() == Some("bot_message")
    }

    /// Posted by the bot with this `bot_id` (normally the app's own, from `auth.test`).
    pub fn is_from_bot_id(&self, bot_id: &str) -> bool {
        self.bot_id.as_deref() == Some(bot_id)
    }

    /// A new post by a person: no bot, and no subtype other than ones that are still posts.
    /// Edits (`message_changed`), deletions and joins are not.
    pub fn is_user_post(&self) -> bool {
        self.user.is_some()
            && !self.is_from_bot()
            && matches!(
                self.subtype.as_deref(),
                None | Some("thread_broadcast" | "file_share")
            )
    }

    /// The message is in a one-to-one DM with the app.
    pub fn is_direct_message(&self) -> bool {
        self.channel_type.as_deref() == Some("im")
    }

    /// The `thread_ts` a reply should use: the thread's parent, or this message to start one.
    pub fn thread_root_ts(&self) -> &str {
        self.thread_ts.as_deref().unwrap_or(&self.ts)
    }
}
