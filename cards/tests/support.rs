//! The story builder lives in the crate behind the `test-support` feature, so the adapters' tests
//! build the same event streams.

pub(crate) use workmate_cards::testing::*;

use workmate_cards::{Block, ButtonStyle, Card, Inline};

/// `(label, style)` of every button of the card.
pub(crate) fn buttons(card: &Card) -> Vec<(String, ButtonStyle)> {
    every_button(card)
        .map(|b| (b.label.clone(), b.style))
        .collect()
}

/// The text of every context line of the card.
pub(crate) fn context_lines(card: &Card) -> Vec<String> {
    card.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Context(inlines) => Some(inlines.iter().map(Inline::text).collect()),
            _ => None,
        })
        .collect()
}
