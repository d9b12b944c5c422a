//! In a group where several people's conversations share one chat, turn and question cards name
//! the person they answer; elsewhere they do not.

use workmate_cards::{CardRef, SessionView, card_for};

use crate::support::{Story, context_lines, item, turn};

fn asked_where_to_post() -> Story {
    let mut s = Story::asking_which_deploys_failed();
    s.ask_where_to_post("call_1", "ib_1");
    s
}

fn first_lines(view: &SessionView) -> (String, String) {
    let line = |changed: CardRef| {
        let (_, card) = card_for(view, &changed).unwrap();
        context_lines(&card).into_iter().next().unwrap_or_default()
    };
    (
        line(CardRef::Turn(turn("tn_1"))),
        line(CardRef::Question(item("ib_1"))),
    )
}

#[test]
fn cards_of_a_personal_conversation_in_a_group_name_their_person() {
    let mut view = asked_where_to_post().view();
    view.name_people(true);
    let (turn_line, question_line) = first_lines(&view);
    assert!(
        turn_line.starts_with("👤 Alice Chen · "),
        "the turn's status line names Alice: {turn_line}"
    );
    assert!(
        question_line.starts_with("👤 Alice Chen · "),
        "the question names Alice: {question_line}"
    );
}

#[test]
fn cards_of_a_thread_or_a_direct_chat_name_nobody() {
    let view = asked_where_to_post().view();
    let (turn_line, question_line) = first_lines(&view);
    assert!(!turn_line.contains("👤"), "{turn_line}");
    assert!(!question_line.contains("👤"), "{question_line}");
}
