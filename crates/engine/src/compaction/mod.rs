//! Auto-compaction (spec §2.10): when a conversation nears its model's context window, the older
//! part is summarized and a compaction view, stored with the session, replaces it in what models
//! are sent.
//!
//! Invariants: the canonical history is never changed (the view only says which message the sent
//! part begins at, and what stands in for the rest); a view begins at a user message, or at an
//! assistant message of the newest turn, never at a tool result, so every call sent still has its
//! result; the block standing in for the older part is rebuilt from the history each time, with
//! the user's own words and the working state kept mechanically; when no summary can be made the
//! older part is trimmed instead, and the notice says so.

mod block;
mod settings;
mod span;

pub(crate) use block::{block, summary_request};
pub(crate) use settings::{CompactionSettings, parse_setting};
pub(crate) use span::{boundary, context_tokens, start};

use workmate_protocol::{CompactionView, Message, UserContent};

/// The share of the trigger that a compaction keeps as it is (the newest turns).
pub(crate) const KEEP_SHARE: f64 = 0.25;

/// The notice of a compaction with a summary.
pub(crate) const COMPACTED_NOTICE: &str = "Context compacted — earlier turns were summarized";
/// The notice of a compaction without one.
pub(crate) const TRIMMED_NOTICE: &str =
    "Context trimmed — oldest turns dropped (summary unavailable)";

/// `tokens` × [`KEEP_SHARE`].
pub(crate) fn keep_tokens(tokens: u64) -> u64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share of a token count far below 2^52"
    )]
    let kept = (tokens as f64 * KEEP_SHARE) as u64;
    kept.max(1)
}

/// Whether the conversation has an earlier turn a compaction asked for could replace: a user
/// message after the one the view begins at.
pub(crate) fn can_compact(history: &[Message], view: Option<&CompactionView>) -> bool {
    let begin = start(history, view);
    history
        .iter()
        .skip(begin + 1)
        .any(|m| matches!(m, Message::User { .. }))
}

/// The history as the view shows it: system prompts before the boundary, the block, then every
/// message from the boundary on. Without a view, the history itself.
pub(crate) fn viewed<'h>(
    history: &'h [Message],
    view: Option<&CompactionView>,
) -> Box<dyn Iterator<Item = std::borrow::Cow<'h, Message>> + 'h> {
    use std::borrow::Cow;
    let Some(view) = view else {
        return Box::new(history.iter().map(Cow::Borrowed));
    };
    let start = start(history, Some(view));
    let systems = history[..start]
        .iter()
        .filter(|m| matches!(m, Message::System { .. }))
        .map(Cow::Borrowed);
    let summary = Message::User {
        content: UserContent::Text(view.summary.clone()),
        ts: view.at_ms,
        author: None,
        display: None,
    };
    Box::new(
        systems
            .chain(std::iter::once(Cow::Owned(summary)))
            .chain(history[start..].iter().map(Cow::Borrowed)),
    )
}
