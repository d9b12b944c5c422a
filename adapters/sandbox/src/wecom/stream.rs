//! Following a stream as WeCom does: once workmate's passive reply opened a stream in a
//! message's bubble, a background task asks for it again about every [`REFRESH_EVERY`] and
//! redraws the bubble with each answer, until an answer says `finish` or [`STREAM_LIFETIME`] has
//! passed since the stream opened.
//!
//! Invariants: one task per stream, and at most [`MAX_FOLLOWED`] at once (a stream over the cap
//! keeps the content it opened with, marked stopped); a refresh that fails (workmate
//! restarting, a refusal) is retried at the next tick, never faster; an answer for another
//! stream, or one that is not a stream message, is not shown; a template card riding on an answer
//! (`stream_with_template_card`, one per stream) is shown once, below the bubble, as WeCom shows
//! it, when it is a card WeCom would show; a bubble whose stream ended
//! without `finish` is marked `"sandbox_stopped": true` (the sandbox's own field, not WeCom's),
//! so the page stops showing it as typing. WeCom shows the first finished content for good:
//! nothing is drawn after it.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{BOT_NAME, CHAT_ID, callbacks, cards};
use crate::AppState;
use crate::store::NewMessage;

/// How often WeCom asks for a stream again.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_secs(1);
/// How long WeCom asks for a stream at most.
pub(crate) const STREAM_LIFETIME: Duration = Duration::from_secs(6 * 60);
/// Streams followed at once at most.
const MAX_FOLLOWED: usize = 64;

/// Whether a stored stream bubble is finished.
fn finished(blocks: &Value) -> bool {
    blocks
        .get("stream")
        .and_then(|s| s.get("finish"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Releases a following slot when its task ends, however it ends.
struct Slot(AppState);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.wecom.following.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Marks the bubble's stream stopped without `finish`.
fn stop(state: &AppState, bubble: &str, mut blocks: Value) {
    if let Some(object) = blocks.as_object_mut() {
        object.insert("sandbox_stopped".into(), true.into());
    }
    state.wecom.store.redraw(bubble, blocks);
}

/// Follows the stream `stream_id` shown in the message `bubble` (whose blocks are `opened`, the
/// passive reply) in the thread of the message `asked`, asking as `userid` did.
pub(crate) fn follow(
    state: &AppState,
    asked: String,
    bubble: String,
    stream_id: String,
    userid: String,
    opened: Value,
) {
    if finished(&opened) {
        return;
    }
    if state.wecom.following.fetch_add(1, Ordering::SeqCst) >= MAX_FOLLOWED {
        state.wecom.following.fetch_sub(1, Ordering::SeqCst);
        tracing::warn!("The sandbox's WeCom follows too many streams; one is left as it opened.");
        stop(state, &bubble, opened);
        return;
    }
    let slot = Slot(state.clone());
    tokio::spawn(async move {
        let state = &slot.0;
        let started = Instant::now();
        let mut shown = opened;
        let mut card_shown = false;
        let mut tick = tokio::time::interval_at(started + REFRESH_EVERY, REFRESH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if started.elapsed() >= STREAM_LIFETIME {
                stop(state, &bubble, shown);
                return;
            }
            let refresh = callbacks::refresh(&stream_id, &userid);
            let answer = match super::deliver::exchange(state, &refresh).await {
                Ok((status, Some(answer))) if status.is_success() => answer,
                Ok((status, _)) => {
                    tracing::debug!(status = status.as_u16(), "A stream refresh got no stream.");
                    continue;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "A stream refresh did not reach workmate.");
                    continue;
                }
            };
            let msgtype = answer.get("msgtype").and_then(Value::as_str);
            let same_stream = matches!(msgtype, Some("stream" | "stream_with_template_card"))
                && answer
                    .get("stream")
                    .and_then(|s| s.get("id"))
                    .and_then(Value::as_str)
                    == Some(stream_id.as_str());
            if !same_stream {
                tracing::warn!(%answer, "workmate answered a stream refresh with another message.");
                continue;
            }
            let answer = if msgtype == Some("stream_with_template_card") {
                if !card_shown {
                    card_shown = show_card(state, &asked, &answer["template_card"]);
                }
                json!({ "msgtype": "stream", "stream": answer["stream"] })
            } else {
                answer
            };
            let done = finished(&answer);
            if !state.wecom.store.redraw(&bubble, answer.clone()) {
                // The message left the chat: nothing shows the stream any more.
                return;
            }
            shown = answer;
            if done {
                return;
            }
        }
    });
}

/// Shows a card that rode on a stream below the message `asked`; false when WeCom would not
/// show it.
fn show_card(state: &AppState, asked: &str, card: &Value) -> bool {
    if let Err(why) = cards::check(card) {
        tracing::warn!(%why, "workmate's card riding on a stream is not one WeCom shows.");
        return false;
    }
    state.wecom.store.push(NewMessage {
        thread: Some(asked.to_owned()),
        blocks: json!({ "msgtype": "template_card", "template_card": card }),
        ..NewMessage::new(CHAT_ID, BOT_NAME, "")
    });
    true
}
