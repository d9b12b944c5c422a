//! The Slack Web API as the bench's service sees it: every call answers `ok`, and the
//! `chat.postMessage` bodies are tallied per thread.
//!
//! Invariant: a thread counts as carded at its first posted message that is not a "could not
//! take this message" notice, and the time of the last thread carded is kept. Each bench event
//! opens its own thread, so the threads carded are the events whose turn card was posted, however
//! many messages a turn posts, and the last one's time ends the end-to-end figure. The fake runs
//! in the measured process (the soak reads that process's memory), so a thread's mark is one bit,
//! indexed by the event number the bench client writes into its `ts`.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::routing::post;
use serde_json::{Value, json};

/// The text the chat layer starts a delivery's "not taken" notice with.
const NOT_TAKEN: &str = "⚠️ workmate could not take";

/// What the fake saw, shared with the bench.
#[derive(Debug, Default)]
pub(super) struct Cards {
    tally: Mutex<Tally>,
}

/// A copy of the tally at one moment.
#[derive(Clone, Debug, Default)]
pub(super) struct Seen {
    /// Distinct threads with a posted turn card.
    pub(super) threads: usize,
    /// `chat.postMessage` calls in all (notices included).
    pub(super) posts: usize,
    /// Posted "could not take" notices.
    pub(super) notices: usize,
    /// `chat.update` calls.
    pub(super) updates: usize,
    /// When the last thread got its first turn card.
    pub(super) last_card: Option<Instant>,
}

/// The fields of a `chat.postMessage` body the tally reads.
#[derive(Debug, Default, serde::Deserialize)]
struct Posted<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thread_ts: Option<Cow<'a, str>>,
}

#[derive(Debug, Default)]
struct Tally {
    /// Bit `n` set: the thread of event `n` has its turn card.
    carded: Vec<u64>,
    seen: Seen,
}

impl Tally {
    /// Marks the thread of event `n`; false if it was marked before.
    fn mark(&mut self, n: usize) -> bool {
        let (word, bit) = (n / 64, 1u64 << (n % 64));
        if self.carded.len() <= word {
            self.carded.resize(word + 1, 0);
        }
        let fresh = self.carded[word] & bit == 0;
        self.carded[word] |= bit;
        fresh
    }
}

/// The event number in a bench thread's `ts` (`1700000000.000042` is event 42).
fn event_number(thread_ts: &str) -> Option<usize> {
    thread_ts.split_once('.')?.1.parse().ok()
}

impl Cards {
    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn posted(&self, body: &[u8]) {
        // Only two fields are read: the blocks are skipped, not built into a tree (this fake's
        // CPU counts as the server's).
        let body: Posted<'_> = serde_json::from_slice(body).unwrap_or_default();
        let text = body.text.as_deref().unwrap_or_default();
        let thread = body.thread_ts.as_deref().and_then(event_number);
        let mut tally = self.lock();
        tally.seen.posts += 1;
        if text.starts_with(NOT_TAKEN) {
            tally.seen.notices += 1;
            return;
        }
        if let Some(thread) = thread
            && tally.mark(thread)
        {
            tally.seen.threads += 1;
            tally.seen.last_card = Some(Instant::now());
        }
    }

    fn updated(&self) {
        self.lock().seen.updates += 1;
    }

    pub(super) fn seen(&self) -> Seen {
        self.lock().seen.clone()
    }
}

/// A stand-in for the Slack Web API calls the adapter makes.
pub(super) fn router(cards: Arc<Cards>) -> Router {
    // Each answer is encoded once; a response only clones its bytes.
    let ok = |extra: Value| {
        let mut body = json!({"ok": true});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let json = Bytes::from(body.to_string());
        ([(header::CONTENT_TYPE, "application/json")], json)
    };
    let message = ok(json!({"channel": "C1", "ts": "1700000000.0001"}));
    let update = message.clone();
    let auth = ok(json!({"team_id": "TBENCH", "user_id": "UBOT", "bot_id": "BBOT"}));
    let ephemeral = ok(json!({"message_ts": "1700000000.0009"}));
    let updates = Arc::clone(&cards);
    Router::new()
        .route(
            "/chat.postMessage",
            post(move |body: Bytes| {
                cards.posted(&body);
                async move { message }
            }),
        )
        .route(
            "/chat.update",
            post(move || {
                updates.updated();
                async move { update }
            }),
        )
        .route("/auth.test", post(move || async move { auth }))
        .route(
            "/chat.postEphemeral",
            post(move || async move { ephemeral }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_carded_once_by_its_event_number() {
        assert_eq!(event_number("1700000000.000042"), Some(42));
        assert_eq!(event_number("1700000000"), None);
        let mut tally = Tally::default();
        assert!(tally.mark(42));
        assert!(!tally.mark(42));
        assert!(tally.mark(999_999));
        assert_eq!(tally.carded.len(), 999_999 / 64 + 1);
    }
}
