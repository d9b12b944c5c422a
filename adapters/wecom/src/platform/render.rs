//! A card of the IR as [`super::WeComPlatform`] hands it to itself: a prompt as
//! `{"template_card": …}`, any other card as `{"markdown": …, "more": …}` (more to come while
//! its turn runs), without its "↓ Continued below" line, since what follows comes right below,
//! in the same stream.

use serde_json::{Value, json};
use workmate_cards::{Block, ButtonAction, CONTINUED_BELOW, Card, Inline};

use crate::card::{markdown, task_id, template_card};

/// `card` as the platform's `render` gives it.
pub(super) fn rendered(card: &Card) -> Value {
    match prompt_item(card) {
        Some(item) => json!({ "template_card": template_card(card, &task_id(&item)) }),
        None => {
            let shown = Card {
                blocks: card
                    .blocks
                    .iter()
                    .filter(|b| !is_continued_below(b))
                    .cloned()
                    .collect(),
            };
            json!({ "markdown": markdown(&shown), "more": more_to_come(card) })
        }
    }
}

/// A rendered stream card's markdown and whether more is to come.
pub(super) fn stream_part(rendered: &Value) -> (String, bool) {
    let markdown = rendered
        .get("markdown")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let more = rendered
        .get("more")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    (markdown, more)
}

/// The inbox item a prompt card answers, from its first answer button.
fn prompt_item(card: &Card) -> Option<String> {
    card.blocks.iter().find_map(|block| match block {
        Block::Actions(buttons) => buttons.iter().find_map(|b| match &b.action {
            ButtonAction::Resolve { item_id, .. } => Some(item_id.to_string()),
            ButtonAction::Stop { .. } => None,
        }),
        _ => None,
    })
}

/// Whether a card says more is coming: it has a Stop button, or it continues below.
fn more_to_come(card: &Card) -> bool {
    card.blocks.iter().any(|block| match block {
        Block::Actions(buttons) => buttons
            .iter()
            .any(|b| matches!(b.action, ButtonAction::Stop { .. })),
        block => is_continued_below(block),
    })
}

/// Whether a block is the "↓ Continued below" line of a card whose turn goes on in another.
fn is_continued_below(block: &Block) -> bool {
    matches!(block, Block::Context(inlines)
        if inlines.iter().any(|i| matches!(i, Inline::Text(t) if t == CONTINUED_BELOW)))
}
