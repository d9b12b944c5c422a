//! The channels' messages of one platform, in memory: the part of a stand-in both platforms
//! share (Slack's channels and Feishu's chats are both channels of threads here).
//!
//! Invariant: a channel holds at most [`MAX_MESSAGES_PER_CHANNEL`] messages (the oldest go
//! first); message ids are unique within a store and are shaped like the platform's own
//! ([`IdStyle`]): Slack's `"<unix seconds>.<6-digit counter>"`, which increase, Feishu's
//! `om_…` or WeCom's hex `msgid`. The lock is never held across an `.await`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

/// Messages kept per channel.
pub const MAX_MESSAGES_PER_CHANNEL: usize = 1000;

/// How a store names its messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum IdStyle {
    /// Slack's `ts`: `"<unix seconds>.<6-digit counter>"`.
    #[default]
    Slack,
    /// Feishu's `message_id`: `om_` and hex digits.
    Feishu,
    /// WeCom's `msgid`: hex digits.
    WeCom,
    /// DingTalk's `msgId`: `msg` and hex digits.
    DingTalk,
}

/// One message as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Message {
    /// Its id: Slack's `ts` or Feishu's `message_id`.
    pub(crate) ts: String,
    /// When it was posted, in Unix seconds.
    pub(crate) time: u64,
    /// The thread's root `ts`; `None` for a root message.
    pub(crate) thread_ts: Option<String>,
    pub(crate) user: String,
    pub(crate) text: String,
    /// The rich content: Slack's blocks, or a Feishu Card JSON 2.0 sent inline.
    pub(crate) blocks: Value,
    /// The Feishu card entity (CardKit) the message shows, drawn as it is now.
    pub(crate) card_id: Option<String>,
    /// Seen only by this user (`chat.postEphemeral`).
    pub(crate) ephemeral_for: Option<String>,
    pub(crate) edited: bool,
}

/// A message to add.
#[derive(Debug, Default)]
pub(crate) struct NewMessage {
    pub(crate) channel: String,
    /// The thread's root id; `None` starts a thread.
    pub(crate) thread: Option<String>,
    pub(crate) user: String,
    pub(crate) text: String,
    pub(crate) blocks: Value,
    pub(crate) card_id: Option<String>,
    pub(crate) ephemeral_for: Option<String>,
}

impl NewMessage {
    /// A plain message of `user` in `channel`.
    pub(crate) fn new(channel: &str, user: &str, text: &str) -> Self {
        Self {
            channel: channel.to_owned(),
            user: user.to_owned(),
            text: text.to_owned(),
            ..Self::default()
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    channels: BTreeMap<String, VecDeque<Message>>,
    counter: u64,
}

/// All channels of one platform.
#[derive(Debug, Default)]
pub(crate) struct Store {
    ids: IdStyle,
    /// Display names of known channels; others show their id.
    names: &'static [(&'static str, &'static str)],
    inner: Mutex<Inner>,
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Store {
    /// An empty store naming messages in `ids` style and channels by `names`.
    pub(crate) fn new(ids: IdStyle, names: &'static [(&'static str, &'static str)]) -> Self {
        Self {
            ids,
            names,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the map half-updated in a way that matters
        // to a demo page, so a poisoned lock is simply taken over.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a message; returns its id.
    pub(crate) fn push(&self, new: NewMessage) -> String {
        let mut inner = self.lock();
        inner.counter += 1;
        let time = unix_now();
        let ts = match self.ids {
            IdStyle::Slack => format!("{time}.{:06}", inner.counter % 1_000_000),
            IdStyle::Feishu => format!("om_{time:x}{:08x}", inner.counter),
            IdStyle::WeCom => format!("{time:x}{:016x}", inner.counter),
            IdStyle::DingTalk => format!("msg{time:x}{:08x}", inner.counter),
        };
        let messages = inner.channels.entry(new.channel).or_default();
        while messages.len() >= MAX_MESSAGES_PER_CHANNEL {
            messages.pop_front();
        }
        messages.push_back(Message {
            ts: ts.clone(),
            time,
            thread_ts: new.thread.filter(|t| !t.is_empty()),
            user: new.user,
            text: new.text,
            blocks: new.blocks,
            card_id: new.card_id,
            ephemeral_for: new.ephemeral_for,
            edited: false,
        });
        ts
    }

    /// Replaces a message's text and blocks; `false` if there is no such message.
    pub(crate) fn update(&self, channel: &str, ts: &str, text: &str, blocks: Value) -> bool {
        let mut inner = self.lock();
        let Some(message) = inner
            .channels
            .get_mut(channel)
            .and_then(|m| m.iter_mut().find(|m| m.ts == ts))
        else {
            return false;
        };
        message.text = text.to_owned();
        message.blocks = blocks;
        message.edited = true;
        true
    }

    /// Replaces the blocks of the message `ts` in any channel, without marking it edited (the
    /// platform redrew it: a stream's refresh, a card replaced by a click's answer); `false` if
    /// there is no such message.
    pub(crate) fn redraw(&self, ts: &str, blocks: Value) -> bool {
        let mut inner = self.lock();
        let Some(message) = inner
            .channels
            .values_mut()
            .find_map(|m| m.iter_mut().find(|m| m.ts == ts))
        else {
            return false;
        };
        message.blocks = blocks;
        true
    }

    /// The ids of the messages, in any channel, whose blocks `pick` selects.
    pub(crate) fn ids_where(&self, pick: impl Fn(&Message) -> bool) -> Vec<String> {
        self.lock()
            .channels
            .values()
            .flat_map(|m| m.iter().filter(|m| pick(m)).map(|m| m.ts.clone()))
            .collect()
    }

    /// A message by id.
    pub(crate) fn get(&self, channel: &str, ts: &str) -> Option<Message> {
        self.lock()
            .channels
            .get(channel)
            .and_then(|m| m.iter().find(|m| m.ts == ts).cloned())
    }

    /// Removes a message (one whose sending failed after all).
    pub(crate) fn remove(&self, ts: &str) {
        let mut inner = self.lock();
        for messages in inner.channels.values_mut() {
            messages.retain(|m| m.ts != ts);
        }
        inner.channels.retain(|_, messages| !messages.is_empty());
    }

    /// A message by id in any channel, with its channel.
    pub(crate) fn find(&self, ts: &str) -> Option<(String, Message)> {
        self.lock().channels.iter().find_map(|(channel, messages)| {
            messages
                .iter()
                .find(|m| m.ts == ts)
                .map(|m| (channel.clone(), m.clone()))
        })
    }

    /// Every channel with its threads (root first, then replies, in order).
    pub(crate) fn snapshot(&self) -> Value {
        let inner = self.lock();
        let channels: Vec<Value> = inner
            .channels
            .iter()
            .map(|(id, messages)| {
                let mut threads: Vec<(String, Vec<&Message>)> = Vec::new();
                for message in messages {
                    let root = message.thread_ts.as_deref().unwrap_or(&message.ts);
                    match threads.iter_mut().find(|(ts, _)| ts == root) {
                        Some((_, list)) => list.push(message),
                        None => threads.push((root.to_owned(), vec![message])),
                    }
                }
                let threads: Vec<Value> = threads
                    .into_iter()
                    .map(|(ts, messages)| serde_json::json!({ "ts": ts, "messages": messages }))
                    .collect();
                let name = self
                    .names
                    .iter()
                    .find(|(known, _)| known == id)
                    .map_or(id.as_str(), |(_, name)| name);
                serde_json::json!({ "id": id, "name": name, "threads": threads })
            })
            .collect();
        serde_json::json!({ "channels": channels })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_keeps_the_newest_messages() {
        let store = Store::default();
        let first = store.push(NewMessage::new("C", "U1", "first"));
        for i in 0..MAX_MESSAGES_PER_CHANNEL {
            store.push(NewMessage::new("C", "U1", &format!("m{i}")));
        }
        assert!(store.get("C", &first).is_none());
        let inner = store.lock();
        assert_eq!(inner.channels["C"].len(), MAX_MESSAGES_PER_CHANNEL);
    }

    #[test]
    fn replies_are_grouped_under_their_root() {
        let store = Store::default();
        let root = store.push(NewMessage::new("C", "U1", "root"));
        store.push(NewMessage {
            thread: Some(root.clone()),
            ..NewMessage::new("C", "UBOT", "reply")
        });
        store.push(NewMessage::new("C", "U2", "other"));
        let snapshot = store.snapshot();
        let threads = snapshot["channels"][0]["threads"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0]["ts"], root.as_str());
        assert_eq!(threads[0]["messages"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn feishu_ids_are_unique_and_found_in_any_channel() {
        let store = Store::new(IdStyle::Feishu, &[("oc_x", "general")]);
        let a = store.push(NewMessage::new("oc_x", "ou_a", "one"));
        let b = store.push(NewMessage::new("ou_a", "ou_bot", "two"));
        assert!(a.starts_with("om_") && b.starts_with("om_"));
        assert_ne!(a, b);
        let (channel, message) = store.find(&b).unwrap();
        assert_eq!((channel.as_str(), message.text.as_str()), ("ou_a", "two"));
        assert!(store.find("om_missing").is_none());
        assert_eq!(store.snapshot()["channels"][0]["name"], "general");
        assert_eq!(store.snapshot()["channels"][1]["name"], "ou_a");
    }

    #[test]
    fn a_redraw_replaces_the_blocks_without_marking_an_edit() {
        let store = Store::new(IdStyle::WeCom, &[]);
        let a = store.push(NewMessage::new("wr_x", "zhangsan", "one"));
        let b = store.push(NewMessage::new("wr_x", "UBOT", "two"));
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()) && a != b);
        assert!(store.redraw(&b, serde_json::json!({"task_id": "t1"})));
        assert!(!store.redraw("nothing", Value::Null));
        let message = store.get("wr_x", &b).unwrap();
        assert_eq!(message.blocks["task_id"], "t1");
        assert!(!message.edited);
        assert_eq!(store.ids_where(|m| m.blocks["task_id"] == "t1"), vec![b]);
    }
}
