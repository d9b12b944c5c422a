//! The approval template's variables read back from a card of the IR.
//!
//! The chat layer hands an adapter the rendered IR card ([`workmate_cards::approval_card`]), not
//! the view, so the variables [`super::approval_param_map`] builds from the view are recovered
//! from the IR here: a pending prompt by its buttons (each resolves an item with an approval
//! choice), a decided one by its shape (the `Run <tool>?` title line, and the outcome line that
//! replaced the buttons: `✅ Approved by …`, `❌ Denied by …`, `Dismissed: …`, `Resolved by …`).
//!
//! Invariants: for every state a prompt answered with an approval choice (or closed without an
//! answer) can be in, the map equals `approval_param_map` of its view, except `choices`, which a
//! decided card no longer carries and is `[]` (the template shows no button unless `status` is
//! `pending` anyway); a prompt resolved by some other kind of answer, which the IR shows only as
//! `Resolved by <name>`, is `expired` with that approver, where the view could tell approved
//! from denied — a test holds the two together, so a change of
//! the IR's wording fails there, not on a user's screen; a card of any other shape is not an
//! approval (`None`).

use serde_json::{Map, Value};
use workmate_cards::{Block, ButtonAction, Card, Inline, RichText};
use workmate_protocol::{InboxItemId, Resolution};

use super::inline::escape;
use super::markdown::markdown_blocks;

/// The label of the field that names who asked.
const REQUESTED_BY: &str = "Requested by";

/// The outcome line of a decided prompt: its `status`, its approver and why it closed.
struct Outcome {
    status: &'static str,
    approver: String,
    closed: Option<String>,
}

/// The approval template's `cardParamMap` of an IR approval card, with the inbox item its buttons
/// resolve (known only while it is pending); `None` when the card is not an approval prompt.
pub fn approval_params_of(card: &Card) -> Option<(Option<InboxItemId>, Map<String, Value>)> {
    let mut item_id = None;
    let mut choices = Vec::new();
    for block in &card.blocks {
        let Block::Actions(buttons) = block else {
            continue;
        };
        for button in buttons {
            if let ButtonAction::Resolve {
                item_id: id,
                resolution: Resolution::Approval { choice },
            } = &button.action
            {
                item_id.get_or_insert_with(|| id.clone());
                choices.push(Value::String(choice.as_str().to_owned()));
            }
        }
    }
    let tool = title_tool(card.blocks.first());
    let outcome = if choices.is_empty() {
        Some(outcome(card.blocks.last()?)?).filter(|_| tool.is_some())?
    } else {
        Outcome {
            status: "pending",
            approver: String::new(),
            closed: None,
        }
    };
    let skip = usize::from(tool.is_some());
    let end = card.blocks.len() - usize::from(choices.is_empty());
    // The template shows who asked on a line of its own (`requester`): not again in the detail.
    let body: Vec<Block> = card.blocks[skip..end]
        .iter()
        .filter(|block| !matches!(block, Block::Actions(_)))
        .filter_map(|block| match block {
            Block::Fields(fields) => {
                let rest: Vec<(String, String)> = fields
                    .iter()
                    .filter(|(label, _)| label != REQUESTED_BY)
                    .cloned()
                    .collect();
                (!rest.is_empty()).then_some(Block::Fields(rest))
            }
            other => Some(other.clone()),
        })
        .collect();
    let mut detail = markdown_blocks(&body);
    if let Some(closed) = &outcome.closed {
        detail.push_str("\n\n> ");
        detail.push_str(&escape(&format!("Closed: {closed}"), false));
    }
    let title = tool.map_or_else(|| "Approval needed".to_owned(), |t| format!("Run {t}?"));
    let mut map = Map::new();
    let mut put = |key: &str, value: String| {
        map.insert(key.to_owned(), Value::String(value));
    };
    put("status", outcome.status.to_owned());
    put("title", title);
    put("detail", detail);
    put("requester", requester(&card.blocks));
    put("approver", outcome.approver);
    put("choices", Value::Array(choices).to_string());
    Some((item_id, map))
}

/// The tool of an approval card's title line, `**Run** `tool` **?**`.
fn title_tool(block: Option<&Block>) -> Option<String> {
    let Some(Block::Text(RichText(inlines))) = block else {
        return None;
    };
    match inlines.as_slice() {
        [Inline::Bold(run), Inline::Code(tool), Inline::Bold(mark)]
            if run == "Run " && mark == "?" =>
        {
            Some(tool.clone())
        }
        _ => None,
    }
}

/// The outcome a decided prompt's last line states, if it is one.
fn outcome(block: &Block) -> Option<Outcome> {
    let Block::Context(inlines) = block else {
        return None;
    };
    let line: String = inlines.iter().map(Inline::text).collect();
    let decided = |status, approver: &str| Outcome {
        status,
        approver: approver.to_owned(),
        closed: None,
    };
    if let Some(rest) = line.strip_prefix("✅ Approved by ") {
        let name = rest.rsplit_once(" · ").map_or(rest, |(name, _)| name);
        return Some(decided("approved", name));
    }
    if let Some(name) = line.strip_prefix("❌ Denied by ") {
        return Some(decided("denied", name));
    }
    if let Some(reason) = line.strip_prefix("Dismissed: ") {
        return Some(Outcome {
            status: "expired",
            approver: String::new(),
            closed: Some(reason.to_owned()),
        });
    }
    // An answer that is not an approval choice: the card is closed, its buttons hidden.
    line.strip_prefix("Resolved by ")
        .map(|name| decided("expired", name))
}

/// Who asked: the `Requested by` field, or `""`.
fn requester(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            Block::Fields(fields) => Some(fields),
            _ => None,
        })
        .flatten()
        .find(|(label, _)| label == REQUESTED_BY)
        .map(|(_, name)| name.clone())
        .unwrap_or_default()
}
