//! Card keys: which message of a thread shows which card of the view.
//!
//! Invariant: a card's key never changes, so every platform's card pump posts a card once and
//! then updates the same message. Keys: `turn:{turn_id}` for a turn's first segment (the key
//! turn cards had before segments existed, so cards already posted keep updating),
//! `turn:{turn_id}:{n}` for its segment `n ≥ 1`, `{segment key}:page:{p}` for page `p ≥ 1` of a
//! segment's long answer, `approval:{item_id}`, `question:{item_id}` and `plan:{item_id}`.
//! Session notices have no card of their own.

use workmate_protocol::Actor;

use crate::fold::display_name;
use crate::ir::Card;
use crate::pages::turn_cards;
use crate::render::{approval_card, name_person, plan_card, question_card};
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
            .map(|t| {
                named(
                    view,
                    t.author.as_ref(),
                    turn_cards(t, format!("turn:{id}"), answer_budget),
                )
            })
            .unwrap_or_default(),
        CardRef::TurnPart(id, n) => view
            .turn_segment(id, *n)
            .map(|t| {
                named(
                    view,
                    t.author.as_ref(),
                    turn_cards(t, format!("turn:{id}:{n}"), answer_budget),
                )
            })
            .unwrap_or_default(),
        CardRef::Approval(item) => one(view
            .approval(item)
            .map(|a| (format!("approval:{item}"), approval_card(a)))),
        CardRef::Question(item) => view
            .question(item)
            .map(|q| {
                let card = (format!("question:{item}"), question_card(q));
                named(view, q.requested_by.as_ref(), vec![card])
            })
            .unwrap_or_default(),
        CardRef::Plan(item) => one(view
            .plan(item)
            .map(|p| (format!("plan:{item}"), plan_card(p)))),
        CardRef::Notice(_) => Vec::new(),
    }
}

/// `cards` (a segment's or a prompt's, its own card first), the first naming `person` when the
/// view names people. Approval and plan cards name their requester anyway.
fn named(
    view: &SessionView,
    person: Option<&Actor>,
    mut cards: Vec<(String, Card)>,
) -> Vec<(String, Card)> {
    if view.names_people()
        && let (Some(person), Some((_, first))) = (person, cards.first_mut())
    {
        name_person(first, display_name(person));
    }
    cards
}
