//! Answering WeCom's stream refreshes in callback mode, on whichever replica WeCom asks: the
//! replica that runs the turn answers from its own stream, and keeps each change's answer for
//! the others ([`WeComPlatform::with_shared`]); any other replica answers with what was kept.
//!
//! Invariant: a refresh never creates a stream here; a stream this replica does not have is
//! answered from what was kept, or as empty and not finished.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use super::stream::Stream;
use super::{KEPT_FOR, WeComPlatform, lock, prompt, stream_message};

/// The key a stream's latest answer is kept under for the other replicas.
fn shared_key(stream_id: &str) -> String {
    format!("wecom:stream:{stream_id}")
}

impl WeComPlatform {
    /// The answer to a stream refresh: the stream's content now (plaintext JSON, to be sealed).
    /// A stream that just became complete with more than fits sends the rest. A stream this
    /// replica does not have (another one runs its turn, or this one restarted) is answered
    /// with what was last kept for the other replicas, if anything.
    pub async fn refresh(self: &Arc<Self>, stream_id: &str) -> Value {
        let Some(stream) = self.streams.get(stream_id) else {
            if let Some(shared) = &self.shared
                && let Some(kept) = shared.get(&shared_key(stream_id)).await
                && let Ok(answer) = serde_json::from_str(&kept)
            {
                return answer;
            }
            return stream_message(stream_id, "", false);
        };
        let (snapshot, card, tail, url) = {
            let mut s = lock(&stream);
            let snapshot = s.snapshot(Instant::now());
            let card = s.card_to_show();
            (snapshot, card, s.take_tail(), s.response_url.clone())
        };
        if let (Some(tail), Some(url)) = (tail, url) {
            let platform = Arc::clone(self);
            tokio::spawn(async move { platform.send_tail(&url, &tail).await });
        }
        match card {
            Some(card) => prompt::with_card(stream_id, &snapshot.content, snapshot.finish, &card),
            None => stream_message(stream_id, &snapshot.content, snapshot.finish),
        }
    }

    /// Keeps the stream's answer now (its content, without a riding card, which this replica
    /// shows once) for the other replicas, in callback mode.
    pub(super) async fn share(&self, stream_id: &str, stream: &Mutex<Stream>) {
        let Some(shared) = &self.shared else { return };
        let answer = {
            let snapshot = lock(stream).snapshot(Instant::now());
            stream_message(stream_id, &snapshot.content, snapshot.finish)
        };
        shared
            .put(&shared_key(stream_id), answer.to_string(), KEPT_FOR)
            .await;
    }
}
