//! The approval template's card variables (`cardParamMap`) for one permission prompt.
//!
//! Built from the view's [`ApprovalCard`], not from the rendered IR card: the variables are
//! structured (who asked, who decided, the outcome as a word, the offered choices by wire name),
//! and the view carries each of them directly, where the rendered card holds them only as display
//! text. The `detail` markdown still reuses the IR renderer ([`approval_card`]), so DingTalk shows
//! the same previews (the command, the diff, the patch) as every other platform.
//!
//! Invariants: every value is a string (DingTalk rejects anything else in `cardParamMap`);
//! `choices` is always a JSON array of wire names; `detail` does not change when the prompt is
//! decided, except that a prompt closed without an answer says why, so a card's content never
//! contradicts its `status`; `approver` is empty while pending.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use workmate_cards::{ApprovalCard, Block, PromptState, approval_card};
use workmate_protocol::{Actor, InboxItemId, Resolution};

use super::inline::escape;
use super::markdown::markdown_blocks;

/// The longest item id kept readable in an `outTrackId`; longer or unusual ids are hashed.
const MAX_READABLE_ID: usize = 48;

/// The approval template's `cardParamMap` for `card` (see the module docs and the contract):
/// `status`, `title`, `detail`, `requester`, `approver` and `choices`, all strings.
pub fn approval_param_map(card: &ApprovalCard) -> Map<String, Value> {
    let approver = match &card.state {
        PromptState::Pending => String::new(),
        PromptState::Resolved {
            resolution: Resolution::Dismissed { .. },
            ..
        } => String::new(),
        PromptState::Resolved { by, .. } => display_name(by).to_owned(),
    };
    let requester = card
        .requested_by
        .as_ref()
        .map(|actor| display_name(actor).to_owned())
        .unwrap_or_default();
    let choices: Vec<Value> = card
        .choices
        .iter()
        .map(|choice| Value::String(choice.as_str().to_owned()))
        .collect();
    let mut map = Map::new();
    let mut put = |key: &str, value: String| {
        map.insert(key.to_owned(), Value::String(value));
    };
    put("status", status(&card.state).to_owned());
    put("title", format!("Run {}?", card.tool));
    put("detail", detail(card));
    put("requester", requester);
    put("approver", approver);
    put("choices", Value::Array(choices).to_string());
    map
}

/// The template's `status` word for a prompt's state: `pending`, `approved`, `denied` or
/// `expired` (closed without an answer, e.g. the turn was stopped).
///
/// Answers that are not approval choices cannot reach an approval card; should one, a plan or
/// folder grant reads as approved or denied and anything else as expired, so no button stays
/// clickable on a decided prompt.
pub fn status(state: &PromptState) -> &'static str {
    let decided = |allows: bool| if allows { "approved" } else { "denied" };
    match state {
        PromptState::Pending => "pending",
        PromptState::Resolved { resolution, .. } => match resolution {
            Resolution::Approval { choice } => decided(choice.allows()),
            Resolution::Plan { approved, .. } => decided(*approved),
            Resolution::Directory { granted, .. } => decided(*granted),
            Resolution::Answer { .. } | Resolution::Dismissed { .. } => "expired",
            // `Resolution` is non-exhaustive: a kind added later closes the card too.
            _ => "expired",
        },
    }
}

/// What will run and the risk, as markdown: the IR card of the pending prompt without its title
/// line (the template shows `title`), who asked (the template shows `requester`) and buttons (the
/// template has them), and, for a prompt closed without an answer, why.
fn detail(card: &ApprovalCard) -> String {
    let pending = ApprovalCard {
        state: PromptState::Pending,
        requested_by: None,
        ..card.clone()
    };
    let blocks: Vec<Block> = approval_card(&pending)
        .blocks
        .into_iter()
        .skip(1)
        .filter(|block| !matches!(block, Block::Actions(_)))
        .collect();
    let mut text = markdown_blocks(&blocks);
    if let PromptState::Resolved {
        resolution: Resolution::Dismissed { reason },
        ..
    } = &card.state
    {
        text.push_str("\n\n> ");
        text.push_str(&escape(&format!("Closed: {reason}"), false));
    }
    text
}

/// The `outTrackId` of an inbox item's approval card: `approval_<item id>` when the id is short
/// and of plain characters, else `approval_` and the SHA-256 of the id in hex, so it is stable
/// per item and safe in any DingTalk id field.
pub fn out_track_id(item_id: &InboxItemId) -> String {
    let id = item_id.to_string();
    let plain = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain && !id.is_empty() && id.len() <= MAX_READABLE_ID {
        return format!("approval_{id}");
    }
    let digest = Sha256::digest(id.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("approval_{hex}")
}

/// The `outTrackId` of an inbox item's approval card in a person's one-to-one chat with the robot
/// (`user`): a card instance of its own (the group's card has [`out_track_id`]), so an approver's
/// copy and the group's card are two cards, each updated on its own.
pub fn personal_out_track_id(item_id: &InboxItemId, user: &str) -> String {
    let digest = Sha256::digest(user.as_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}{PERSONAL}{hex}", out_track_id(item_id))
}

/// What separates an approval card's item from the person a personal copy is for.
const PERSONAL: &str = "__";

/// The inbox item of an approval card's `outTrackId` (a group's card or a personal copy), when
/// [`out_track_id`] kept the id readable; `None` for a hashed id or any other card's
/// `outTrackId`.
pub fn item_id_of(out_track_id: &str) -> Option<InboxItemId> {
    let id = out_track_id.strip_prefix("approval_")?;
    let id = id.split_once(PERSONAL).map_or(id, |(item, _)| item);
    let plain = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (plain && !id.is_empty() && id.len() <= MAX_READABLE_ID).then(|| InboxItemId::from(id))
}

fn display_name(actor: &Actor) -> &str {
    actor
        .name
        .as_deref()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or(actor.user_id.as_str())
}
