//! Events API bodies (`application/json`): the URL handshake and `event_callback` envelopes.
//!
//! Invariant: only `app_mention` and `message` events are typed; every other event type is kept
//! as [`Event::Other`] so that a new subscription never turns into a failed delivery (which Slack
//! would retry, and eventually disable the app for).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de;
use serde_json::value::RawValue;

use super::DecodeError;

/// Decodes an Events API request body, in one pass over it: the envelope is read with its
/// `event` kept as unparsed text, which is then read straight into its typed fields (no
/// intermediate JSON tree).
pub fn decode_event_envelope(body: &[u8]) -> Result<EventEnvelope, DecodeError> {
    let json = |source| DecodeError::Json {
        what: "Events API envelope",
        source,
    };
    let raw: RawEnvelope<'_> = serde_json::from_slice(body).map_err(json)?;
    Ok(match raw.kind.as_ref() {
        "url_verification" => EventEnvelope::UrlVerification {
            challenge: raw
                .challenge
                .ok_or_else(|| json(de::Error::missing_field("challenge")))?,
        },
        "event_callback" => {
            let event = raw
                .event
                .ok_or_else(|| json(de::Error::missing_field("event")))?;
            EventEnvelope::EventCallback(Box::new(EventCallback {
                team_id: raw.team_id,
                api_app_id: raw.api_app_id,
                event_id: raw.event_id,
                event_time: raw.event_time,
                event: decode_event(event.get()).map_err(json)?,
            }))
        }
        other => EventEnvelope::Other {
            envelope_type: other.to_owned(),
        },
    })
}

/// The envelope's fields, its `event` left unparsed.
#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    challenge: Option<String>,
    #[serde(default)]
    team_id: Option<String>,
    #[serde(default)]
    api_app_id: Option<String>,
    #[serde(default)]
    event_id: Option<String>,
    #[serde(default)]
    event_time: Option<i64>,
    #[serde(default, borrow)]
    event: Option<&'a RawValue>,
}

/// Every field of the event types workmate reads, all optional, read in one pass.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    channel: Option<String>,
    #[serde(default)]
    channel_type: Option<String>,
    #[serde(default)]
    ts: Option<String>,
    #[serde(default)]
    thread_ts: Option<String>,
    #[serde(default)]
    event_ts: Option<String>,
    #[serde(default)]
    bot_id: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    files: Vec<SharedFile>,
    #[serde(default)]
    deleted_ts: Option<String>,
}

/// A file shared with a message (Slack's file object, the fields workmate reads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct SharedFile {
    /// Its id (`F…`).
    #[serde(default)]
    pub id: String,
    /// Its file name.
    #[serde(default)]
    pub name: Option<String>,
    /// Its title, when it has no name.
    #[serde(default)]
    pub title: Option<String>,
    /// Its MIME type.
    #[serde(default)]
    pub mimetype: Option<String>,
    /// Its size in bytes.
    #[serde(default)]
    pub size: Option<u64>,
    /// Where the bot token downloads it.
    #[serde(default)]
    pub url_private_download: Option<String>,
    /// Where the bot token reads it, when there is no download link.
    #[serde(default)]
    pub url_private: Option<String>,
    /// `hosted`, `external`, `snippet`, … or `hidden_by_limit` (a free workspace's old file,
    /// which Slack does not share).
    #[serde(default)]
    pub mode: Option<String>,
}

/// Only the `type` of an event.
#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

/// An event: a message or mention with its fields, any other type by name. An event of
/// another type whose fields do not fit a message's (`user` is an object in `user_change`)
/// is still read, by its type alone.
fn decode_event(json: &str) -> Result<Event, serde_json::Error> {
    let raw = match serde_json::from_str::<RawEvent<'_>>(json) {
        Ok(raw) => raw,
        Err(e) => {
            let tag: Tag<'_> = serde_json::from_str(json)?;
            return match tag.kind.as_ref() {
                "app_mention" | "message" => Err(e),
                other => Ok(Event::Other {
                    event_type: other.to_owned(),
                }),
            };
        }
    };
    let message = |raw: RawEvent<'_>| -> Result<MessageEvent, serde_json::Error> {
        Ok(MessageEvent {
            ts: raw.ts.ok_or_else(|| de::Error::missing_field("ts"))?,
            user: raw.user,
            text: raw.text.unwrap_or_default(),
            channel: raw.channel,
            channel_type: raw.channel_type,
            thread_ts: raw.thread_ts,
            event_ts: raw.event_ts,
            bot_id: raw.bot_id,
            subtype: raw.subtype,
            files: raw.files,
            deleted_ts: raw.deleted_ts,
        })
    };
    Ok(match raw.kind.as_ref() {
        "app_mention" => Event::AppMention(message(raw)?),
        "message" => Event::Message(message(raw)?),
        other => Event::Other {
            event_type: other.to_owned(),
        },
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

/// `type: "event_callback"`. Slack documents `team_id`, `event_id` and `event_time` as always
/// present; they are optional here so that a delivery lacking them is still acknowledged, and
/// the router decides (it dedupes on `event_id`).
#[derive(Debug, Clone, PartialEq)]
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

/// Fields shared by `app_mention` and `message` events.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MessageEvent {
    /// Author's user id; absent for some subtypes (`message_changed`, `bot_message`).
    pub user: Option<String>,
    /// Message text in Slack's mrkdwn, mentions as `<@U…>`; empty when absent.
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
    /// Files shared with the message.
    pub files: Vec<SharedFile>,
    /// For a `message_deleted`: the deleted message's own `ts`.
    pub deleted_ts: Option<String>,
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

    /// For a `message_deleted` event: the deleted message's id (its `ts`).
    pub fn deleted(&self) -> Option<&str> {
        (self.subtype.as_deref() == Some("message_deleted"))
            .then_some(self.deleted_ts.as_deref())
            .flatten()
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
