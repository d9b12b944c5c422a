//! Card keys: which message of a thread shows which card of the view.
//!
//! Invariant: a card's key never changes, so every platform's card pump posts a card once and
//! then updates the same message. Keys: `turn:{turn_id}` for a turn's first segment (the key
//! turn cards had before segments existed, so cards already posted keep updating),
//! `turn:{turn_id}:{n}` for its segment `n ≥ 1`, `approval:{item_id}` and `question:{item_id}`.
//! Session notices have no card of their own.

use crate::ir::Card;
use crate::render::{approval_card, question_card, turn_card};
use crate::view::{CardRef, SessionView};

/// The stable key and the current card of a card an event changed (see
/// [`SessionView::apply`]); `None` when the view has no such card or it is a session notice.
pub fn card_for(view: &SessionView, changed: &CardRef) -> Option<(String, Card)> {
    match changed {
        CardRef::Turn(id) | CardRef::TurnPart(id, 0) => view
            .turn_segment(id, 0)
            .map(|t| (format!("turn:{id}"), turn_card(t))),
        CardRef::TurnPart(id, n) => view
            .turn_segment(id, *n)
            .map(|t| (format!("turn:{id}:{n}"), turn_card(t))),
        CardRef::Approval(item) => view
            .approval(item)
            .map(|a| (format!("approval:{item}"), approval_card(a))),
        CardRef::Question(item) => view
            .question(item)
            .map(|q| (format!("question:{item}"), question_card(q))),
        CardRef::Notice(_) => None,
    }
}
