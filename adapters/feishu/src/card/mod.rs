//! Cards as Feishu Card JSON 2.0: what `im/v1/messages` sends, `PATCH` updates, CardKit streams
//! into, and a callback response returns.
//!
//! Invariants: whatever the card holds, the output is a valid 2.0 card within Feishu's limits:
//! at most [`MAX_CARD_BYTES`] of compact JSON (long text is cut with a note saying how much was
//! left out), at most [`MAX_ELEMENTS`] elements and [`MAX_TABLES`] tables, every element with a
//! unique `element_id` derived from its position, and never the 1.0 `action` container. Text
//! from the card is escaped, so nothing a model writes can mention anyone or inject markup. Each
//! button's callback value is its [`ButtonAction`], which [`decode_action`] reads back. The card
//! is a shared card (`update_multi`), so an update reaches everyone who sees it, and it is in
//! streaming mode exactly while it has a Stop button, i.e. while its turn runs.
//!
//! ```text
//! Card ──blocks──▶ pieces ──layout (element cap, byte budget, ids)──▶ Card JSON 2.0
//! ```

mod blocks;
mod buttons;
mod inline;
mod layout;
mod markdown;
mod table;
mod text;

use serde_json::Value;
use workmate_cards::text::truncate;
use workmate_cards::{Block, ButtonAction, Card};

pub use buttons::{MAX_BUTTON_LABEL_CHARS, MAX_BUTTON_VALUE_BYTES, MAX_BUTTONS};
pub use table::{MAX_CELL_CHARS, MAX_TABLE_COLUMNS, MAX_TABLE_ROWS};

/// Bytes of a card's compact JSON: Feishu rejects a larger card on send and on update.
pub const MAX_CARD_BYTES: usize = 30 * 1024;
/// Elements in a card's body, counting nested ones (a button row is its `column_set`, a `column`
/// and a `button` per button). Feishu rejects a card of more than 200 components (error 300305
/// or 11310), but does not document how it counts nested ones, and integrations report its
/// count differing between sending and CardKit updates; half its limit leaves room for both.
pub const MAX_ELEMENTS: usize = 100;
/// Table components in one card, Feishu's own limit (error 11310); later tables are shown as
/// code.
pub const MAX_TABLES: usize = 5;
/// Characters of the header's title.
pub const MAX_HEADER_CHARS: usize = 100;
/// Characters of the chat-list preview (`config.summary`).
pub const MAX_SUMMARY_CHARS: usize = 80;
/// Characters of [`plain_text`].
pub const MAX_PLAIN_TEXT_CHARS: usize = 500;

/// The card as a Card JSON 2.0 object, within Feishu's limits (see the module docs). A first
/// [`Block::Heading`] becomes the card's header; every other block is one body element, in order.
pub fn render(card: &Card) -> Value {
    let (title, body) = match card.blocks.split_first() {
        Some((Block::Heading { text }, rest)) if !text::one_line(text).is_empty() => (
            Some(truncate(&text::one_line(text), MAX_HEADER_CHARS)),
            rest,
        ),
        _ => (None, card.blocks.as_slice()),
    };
    let summary = plain_text(card)
        .lines()
        .next()
        .map_or_else(|| "…".to_owned(), |line| truncate(line, MAX_SUMMARY_CHARS));
    let frame = layout::Frame {
        title,
        summary,
        streaming: card.blocks.iter().any(|block| match block {
            Block::Actions(list) => buttons::has_stop(list),
            _ => false,
        }),
    };
    layout::card(&frame, &blocks::pieces(body))
}

/// The action a button's callback `value` stands for: the JSON object the button carries, or the
/// same object as a JSON string (as callbacks of the older schema may send it). `None` for
/// anything else.
///
/// The value comes back from Feishu: the caller must still check that the clicker may resolve
/// the item and that it is still pending (or the turn still running).
pub fn decode_action(value: &Value) -> Option<ButtonAction> {
    match value {
        Value::String(text) => serde_json::from_str(text).ok(),
        Value::Object(_) => serde_json::from_value(value.clone()).ok(),
        _ => None,
    }
}

/// The card as plain text, without buttons or markup, at most [`MAX_PLAIN_TEXT_CHARS`]
/// characters: for notifications, previews and a text fallback.
pub fn plain_text(card: &Card) -> String {
    truncate(&text::lines(card).join("\n"), MAX_PLAIN_TEXT_CHARS)
}
