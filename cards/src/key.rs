//! Card keys: which message of a thread shows which card of the view.
//!
//! Invariant: a card's key never changes, so every platform's card pump posts a card once and
//! then updates the same message. Keys: `turn:{turn_id}` for a turn's first segment (the key
//! turn cards had before segments existed, so cards already posted keep updating),
//! `turn:{turn_id}:{n}` for its segment `n ≥ 1`, `{segment key}:page:{p}` for page `p ≥ 1` of a
//! segment's long answer, `approval:{item_id}`, `question:{item_id}` and `plan:{item_id}`.
//! Session notices have no card of their own.

use crate::ir::Card;
use crate::pages::turn_cards;
use crate::render::{approval_card, plan_card, question_card};
use crate::view::{CardRef, SessionView};

/// The stable key and the current card of a card an event changed (see
/// [`SessionView::apply`]); `None` when the view has no such card or it is a session notice. A
/// turn segment is one card here, however long its answer (see [`cards_for`]).
pub fn card_for(view: &SessionView, changed: &CardRef) -> Option<(String, Card)> {
    cards_for(view, changed, usize::MAX).into_iter().next()
}

/// The stable keys and current cards of a card an event changed: one card, or, for a turn
/// segment whose answer is longer than `answer_budget` bytes, one per page of its answer (see
/// [`crate::pages`]), the segment's own key first.
pub fn cards_for(
    view: &SessionView,
    changed: &CardRef,
    answer_budget: usize,
) -> Vec<(String, Card)> {
    let one = |card: Option<(String, Card)>| card.into_iter().collect();
    match changed {
        CardRef::Turn(id) | CardRef::TurnPart(id, 0) => view
            .turn_segment(id, 0)
            .map(|t| turn_cards(t, format!("turn:{id}"), answer_budget))
            .unwrap_or_default(),
        CardRef::TurnPart(id, n) => view
            .turn_segment(id, *n)
            .map(|t| turn_cards(t, format!("turn:{id}:{n}"), answer_budget))
            .unwrap_or_default(),
        CardRef::Approval(item) => one(view
            .approval(item)
            .map(|a| (format!("approval:{item}"), approval_card(a)))),
        CardRef::Question(item) => one(view
            .question(item)
            .map(|q| (format!("question:{item}"), question_card(q)))),
        CardRef::Plan(item) => one(view
            .plan(item)
            .map(|p| (format!("plan:{item}"), plan_card(p)))),
        CardRef::Notice(_) => Vec::new(),
    }
}
