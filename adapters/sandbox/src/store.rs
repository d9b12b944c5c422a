//! The channels' messages, in memory.
//!
//! Invariant: a channel holds at most [`MAX_MESSAGES_PER_CHANNEL`] messages (the oldest go
//! first); `ts` values are unique and increase, `"<unix seconds>.<6-digit counter>"` like Slack's.
//! The lock is never held across an `.await`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

/// Messages kept per channel.
pub const MAX_MESSAGES_PER_CHANNEL: usize = 1000;

/// One message as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Message {
    pub(crate) ts: String,
    /// The thread's root `ts`; `None` for a root message.
    pub(crate) thread_ts: Option<String>,
    pub(crate) user: String,
    pub(crate) text: String,
    pub(crate) blocks: Value,
    /// Seen only by this user (`chat.postEphemeral`).
    pub(crate) ephemeral_for: Option<String>,
    pub(crate) edited: bool,
}

#[derive(Debug, Default)]
struct Inner {
    channels: BTreeMap<String, VecDeque<Message>>,
    counter: u64,
}

/// All channels.
#[derive(Debug, Default)]
pub(crate) struct Store {
    inner: Mutex<Inner>,
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Store {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the map half-updated in a way that matters
        // to a demo page, so a poisoned lock is simply taken over.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds a message; returns its `ts`.
    pub(crate) fn push(
        &self,
        channel: &str,
        thread_ts: Option<String>,
        user: &str,
        text: &str,
        blocks: Value,
        ephemeral_for: Option<String>,
    ) -> String {
        let mut inner = self.lock();
        inner.counter += 1;
        let ts = format!("{}.{:06}", unix_now(), inner.counter % 1_000_000);
        let messages = inner.channels.entry(channel.to_owned()).or_default();
        while messages.len() >= MAX_MESSAGES_PER_CHANNEL {
            messages.pop_front();
        }
        messages.push_back(Message {
            ts: ts.clone(),
            thread_ts: thread_ts.filter(|t| !t.is_empty()),
            user: user.to_owned(),
            text: text.to_owned(),
            blocks,
            ephemeral_for,
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

    /// A message by id.
    pub(crate) fn get(&self, channel: &str, ts: &str) -> Option<Message> {
        self.lock()
            .channels
            .get(channel)
            .and_then(|m| m.iter().find(|m| m.ts == ts).cloned())
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
                let name = if id == crate::CHANNEL_ID {
                    "general"
                } else {
                    id.as_str()
                };
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
        let first = store.push("C", None, "U1", "first", Value::Null, None);
        for i in 0..MAX_MESSAGES_PER_CHANNEL {
            store.push("C", None, "U1", &format!("m{i}"), Value::Null, None);
        }
        assert!(store.get("C", &first).is_none());
        let inner = store.lock();
        assert_eq!(inner.channels["C"].len(), MAX_MESSAGES_PER_CHANNEL);
    }

    #[test]
    fn replies_are_grouped_under_their_root() {
        let store = Store::default();
        let root = store.push("C", None, "U1", "root", Value::Null, None);
        store.push("C", Some(root.clone()), "UBOT", "reply", Value::Null, None);
        store.push("C", None, "U2", "other", Value::Null, None);
        let snapshot = store.snapshot();
        let threads = snapshot["channels"][0]["threads"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(threads.len(), 2);
        assert_eq!(threads[0]["ts"], root.as_str());
        assert_eq!(threads[0]["messages"].as_array().map(Vec::len), Some(2));
    }
}
