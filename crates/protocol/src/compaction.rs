//! The compaction view: how a long conversation is shown to a model once its older part no
//! longer fits (the history itself is never changed).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What stands in for the older part of a session's history when a model is called: every
/// message before `boundary` is replaced by one user message holding `summary`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CompactionView {
    /// The index of the first history message still sent as it is (messages before it are
    /// represented by the summary; system prompts are always kept).
    pub boundary: u64,
    /// The `<compacted-history>` block sent in their place.
    pub summary: String,
    /// Whether no summary could be made and the older turns were trimmed: the block then holds
    /// only what was kept mechanically (the user's own words, the working state).
    pub trimmed: bool,
    /// How many history messages the session had when the view was made.
    pub messages_at: u64,
    /// When the view was made (ms since the epoch).
    pub at_ms: i64,
}
