//! Short replies as cards: what a command or a refusal says, in the card IR every platform
//! renders.

use workmate_cards::{Block, Card, markdown_to_blocks};

/// A card showing `text`, read as markdown (so `code` and **bold** show as such).
pub(crate) fn text_card(text: &str) -> Card {
    let mut blocks = markdown_to_blocks(text);
    if blocks.is_empty() {
        blocks.push(Block::Heading {
            text: text.to_owned(),
        });
    }
    Card { blocks }
}
