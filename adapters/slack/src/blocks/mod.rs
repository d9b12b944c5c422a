//! Cards as Block Kit: the `blocks` array and the notification `text` of a Slack message.
//!
//! Invariant: whatever the card holds, the output is within Slack's limits, so `chat.postMessage`
//! never fails with `invalid_blocks` because of length: at most [`MAX_BLOCKS`] blocks, section
//! text at most [`MAX_SECTION_CHARS`] (longer text becomes several sections, split at line
//! boundaries), header and button text cut with `…`, at most [`MAX_FIELDS`] fields per section
//! and [`MAX_BUTTONS`] buttons per actions block. Every button's `action_id` is `wm:<n>`, unique
//! within the message, and its `value` is the JSON of its [`ButtonAction`], which
//! [`decode_button_value`] reads back. Text is escaped (see `mrkdwn`), so card text can never
//! ping or mention anyone.

mod mrkdwn;
mod table;

use serde_json::{Value, json};
use workmate_cards::text::{list_marker, one_line, plain_lines};
use workmate_cards::{Block, Button, ButtonAction, ButtonStyle, Card, Inline};

use crate::inbound::DecodeError;
use mrkdwn::{escape, split_lines, truncate};

/// Blocks in one message.
pub const MAX_BLOCKS: usize = 50;
/// Characters of a section's text (and of any text object).
pub const MAX_SECTION_CHARS: usize = 3_000;
/// Characters of a header's plain text.
pub const MAX_HEADER_CHARS: usize = 150;
/// Fields in one section.
pub const MAX_FIELDS: usize = 10;
/// Characters of one field's text.
pub const MAX_FIELD_CHARS: usize = 2_000;
/// Elements in one actions block.
pub const MAX_BUTTONS: usize = 25;
/// Characters of a button's label.
pub const MAX_BUTTON_TEXT_CHARS: usize = 75;
/// Characters of a button's `value`.
pub const MAX_BUTTON_VALUE_CHARS: usize = 2_000;
/// Characters of the message's fallback `text` (what notifications show).
pub const MAX_FALLBACK_CHARS: usize = 3_000;
/// What every button's `action_id` starts with; the rest is its index in the message.
pub const ACTION_ID_PREFIX: &str = "wm:";

/// A fence around code costs "```\n" and "\n```".
const FENCE_CHARS: usize = 8;

/// The card as a Block Kit `blocks` array, within Slack's limits.
pub fn render(card: &Card) -> Value {
    let mut out = Renderer::default();
    for block in &card.blocks {
        out.block(block);
    }
    Value::Array(cap(out.blocks))
}

/// The message's `text`: the card as plain lines (no buttons), escaped, at most
/// [`MAX_FALLBACK_CHARS`] characters. Slack shows it in notifications and where blocks cannot
/// be shown.
pub fn fallback_text(card: &Card) -> String {
    let mut lines = plain_lines(card);
    lines.retain(|line| !line.trim().is_empty());
    truncate(&escape(&lines.join("\n")), MAX_FALLBACK_CHARS)
}

/// The action a button's `value` (from a `block_actions` payload) stands for.
///
/// The value came back from Slack: the caller must still check that the clicker may resolve the
/// item and that it is still pending.
pub fn decode_button_value(value: &str) -> Result<ButtonAction, DecodeError> {
    serde_json::from_str(value).map_err(|source| DecodeError::Json {
        what: "button value",
        source,
    })
}

#[derive(Debug, Default)]
struct Renderer {
    blocks: Vec<Value>,
    /// Buttons so far: the next button's `action_id` index.
    buttons: usize,
}

impl Renderer {
    fn block(&mut self, block: &Block) {
        match block {
            Block::Heading { text } => {
                let text = one_line(text);
                if !text.is_empty() {
                    self.blocks.push(json!({
                        "type": "header",
                        "text": plain(&truncate(&text, MAX_HEADER_CHARS)),
                    }));
                }
            }
            Block::Text(text) => self.sections(&mrkdwn::rich_text(text), ""),
            Block::Quote(text) => self.sections(&mrkdwn::rich_text(text), "> "),
            Block::List { ordered, items } => {
                let lines: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        format!("{}{}", list_marker(*ordered, i), mrkdwn::rich_text(item))
                    })
                    .collect();
                self.sections(&lines.join("\n"), "");
            }
            Block::Code { text, .. } => self.code(text),
            Block::Table { header, rows } => self.code(&table::render(header, rows)),
            Block::Fields(fields) => self.fields(fields),
            Block::Context(inlines) => {
                let text = mrkdwn::inlines(inlines);
                if !text.trim().is_empty() {
                    self.blocks
                        .push(context(&truncate(&text, MAX_SECTION_CHARS)));
                }
            }
            Block::Divider => self.blocks.push(json!({ "type": "divider" })),
            Block::Actions(buttons) => self.actions(buttons),
        }
    }

    /// Mrkdwn text as one or more sections, `prefix` before every line.
    fn sections(&mut self, text: &str, prefix: &str) {
        if text.trim().is_empty() {
            return;
        }
        for chunk in split_lines(text, MAX_SECTION_CHARS, prefix) {
            if !chunk.trim().is_empty() {
                self.blocks.push(section(&chunk));
            }
        }
    }

    /// Preformatted text as fenced sections. Slack's fences take no language, and a fence
    /// inside the code is broken up so that it cannot end the block early.
    fn code(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let text = escape(text).replace("```", "`\u{200b}``");
        for chunk in split_lines(&text, MAX_SECTION_CHARS - FENCE_CHARS, "") {
            self.blocks.push(section(&format!("```\n{chunk}\n```")));
        }
    }

    fn fields(&mut self, fields: &[(String, String)]) {
        let texts: Vec<Value> = fields
            .iter()
            .filter(|(label, value)| !label.trim().is_empty() || !value.trim().is_empty())
            .map(|(label, value)| {
                let label =
                    mrkdwn::rich_text(&workmate_cards::RichText(vec![Inline::Bold(label.clone())]));
                let text = format!("{label}\n{}", escape(value));
                mrkdwn_text(&truncate(text.trim(), MAX_FIELD_CHARS))
            })
            .collect();
        for row in texts.chunks(MAX_FIELDS) {
            self.blocks
                .push(json!({ "type": "section", "fields": row.to_vec() }));
        }
    }

    fn actions(&mut self, buttons: &[Button]) {
        let elements: Vec<Value> = buttons.iter().filter_map(|b| self.button(b)).collect();
        for row in elements.chunks(MAX_BUTTONS) {
            self.blocks
                .push(json!({ "type": "actions", "elements": row.to_vec() }));
        }
    }

    /// A button, or none when its action does not fit in a `value` (a click could not be
    /// decoded; showing a dead button would be worse than showing none).
    fn button(&mut self, button: &Button) -> Option<Value> {
        let value = match serde_json::to_string(&button.action) {
            Ok(value) if value.chars().count() <= MAX_BUTTON_VALUE_CHARS => value,
            Ok(value) => {
                tracing::warn!(
                    label = %button.label,
                    chars = value.chars().count(),
                    "Button left out: its action is longer than a Slack button value."
                );
                return None;
            }
            Err(error) => {
                tracing::warn!(label = %button.label, %error, "Button left out: action not serializable.");
                return None;
            }
        };
        let label = one_line(&button.label);
        let label = if label.is_empty() {
            "…".to_owned()
        } else {
            label
        };
        let mut element = json!({
            "type": "button",
            "text": plain(&truncate(&label, MAX_BUTTON_TEXT_CHARS)),
            "action_id": format!("{ACTION_ID_PREFIX}{}", self.buttons),
            "value": value,
        });
        self.buttons += 1;
        let style = match button.style {
            ButtonStyle::Primary => Some("primary"),
            ButtonStyle::Danger => Some("danger"),
            ButtonStyle::Default => None,
        };
        if let (Some(style), Some(object)) = (style, element.as_object_mut()) {
            object.insert("style".into(), style.into());
        }
        Some(element)
    }
}

/// At most [`MAX_BLOCKS`] blocks. When there are more, the earliest ones are kept, and so are the
/// actions blocks (up to half the room), because a pending prompt's buttons are its point; a
/// context note takes the place of the first block left out.
fn cap(blocks: Vec<Value>) -> Vec<Value> {
    if blocks.len() <= MAX_BLOCKS {
        return blocks;
    }
    let room = MAX_BLOCKS - 1;
    let is_actions = |b: &Value| b.get("type").and_then(Value::as_str) == Some("actions");
    let actions = blocks.iter().filter(|b| is_actions(b)).count();
    let mut actions_left = actions.min(room / 2);
    let mut others_left = room - actions_left;
    let keep: Vec<bool> = blocks
        .iter()
        .map(|b| {
            let left = if is_actions(b) {
                &mut actions_left
            } else {
                &mut others_left
            };
            let kept = *left > 0;
            *left = left.saturating_sub(1);
            kept
        })
        .collect();
    let dropped = keep.iter().filter(|k| !**k).count();
    let mut out = Vec::with_capacity(MAX_BLOCKS);
    let mut noted = false;
    for (block, kept) in blocks.into_iter().zip(keep) {
        if kept {
            out.push(block);
        } else if !noted {
            out.push(context(&format!("… (truncated: {dropped} more blocks)")));
            noted = true;
        }
    }
    out
}

fn plain(text: &str) -> Value {
    json!({ "type": "plain_text", "text": text })
}

fn mrkdwn_text(text: &str) -> Value {
    json!({ "type": "mrkdwn", "text": text })
}

fn section(text: &str) -> Value {
    json!({ "type": "section", "text": mrkdwn_text(text) })
}

fn context(text: &str) -> Value {
    json!({ "type": "context", "elements": [mrkdwn_text(text)] })
}
