//! Cards for WeCom's smart robot and self-built app, in the two forms WeCom shows them.
//!
//! - Answers and turn cards are markdown, the `content` of a stream message: [`markdown`]
//!   writes only what both of WeCom's markdown dialects show (see the `markdown` module docs for
//!   the subset and why), escaping text so nothing a model writes becomes markup or a mention;
//!   [`split_stream`] cuts a long text into messages of at most [`MAX_STREAM_BYTES`] at line
//!   breaks.
//! - Prompts and outcomes are `template_card`s: [`template_card`] makes a card with buttons a
//!   `button_interaction` card and any other card a `text_notice`, with the same `task_id` (from
//!   [`task_id`]), so the notice can replace the prompt when someone answers it.
//!
//! Invariants: every template card is within WeCom's limits, which are public constants here
//! (lengths in [`columns`]: WeCom states them in 字, a Chinese character, about two Latin letters
//! wide); each button's `key` is its [`ButtonAction`] as compact JSON, which [`decode_key`] reads
//! back; no output depends on anything but its input.
//!
//! ```text
//! Card ──markdown──▶ String ──split_stream──▶ stream contents (≤ 20,480 bytes each)
//! Card ──template_card(task_id(card key))──▶ button_interaction | text_notice
//! ```

mod buttons;
mod inline;
mod markdown;
mod parts;
mod stream;
mod task_id;
mod template;
mod width;

use workmate_cards::ButtonAction;

pub use buttons::{MAX_BUTTON_TEXT_COLUMNS, MAX_BUTTONS, MAX_KEY_BYTES};
pub use markdown::markdown;
pub use stream::{MAX_STREAM_BYTES, split_stream};
pub use task_id::{MAX_TASK_ID_BYTES, is_task_id, task_id};
pub use template::{
    MAX_DESC_COLUMNS, MAX_HORIZONTAL_ROWS, MAX_KEYNAME_COLUMNS, MAX_SUB_TITLE_COLUMNS,
    MAX_TITLE_COLUMNS, MAX_VALUE_COLUMNS, template_card,
};
pub use width::columns;

/// The action a clicked button's `key` (the event's `event_key` or `EventKey`) stands for;
/// `None` for any other key.
///
/// The key comes back from WeCom: the caller must still check that the clicker may resolve the
/// item and that it is still pending (or the turn still running).
pub fn decode_key(key: &str) -> Option<ButtonAction> {
    serde_json::from_str(key).ok()
}
