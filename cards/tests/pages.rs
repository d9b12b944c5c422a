//! Long answers as pages: every page within the budget, the pages together the whole answer,
//! boundaries that never move as the answer grows, and only the last page carrying the end of
//! the segment (notes, Stop).

use proptest::prelude::*;
use workmate_cards::{
    Block, ButtonAction, CONTINUED_BELOW, Card, CardRef, PAGE_REPLACED, PagesShown, SessionView,
    answer_pages, card_for, cards_for,
};
use workmate_protocol::TurnEndStatus;

use crate::support::{Story, context_lines, turn};

fn has_stop(card: &Card) -> bool {
    card.blocks.iter().any(|b| {
        matches!(b, Block::Actions(buttons)
            if buttons.iter().any(|b| matches!(b.action, ButtonAction::Stop { .. })))
    })
}

/// A paragraph of about 60 bytes, numbered.
fn paragraph(n: usize) -> String {
    format!("Paragraph {n:03}: the quick brown fox jumps over the lazy dog.\n\n")
}

#[test]
fn a_long_answer_is_cut_at_line_breaks_into_pages_within_the_budget() {
    let text: String = (0..40).map(paragraph).collect();
    let pages = answer_pages(&text, 500);
    assert!(pages.len() > 4, "{} pages", pages.len());
    assert_eq!(pages.concat(), text, "the pages are the whole answer");
    for page in &pages {
        assert!(page.len() <= 500, "a page of {} bytes", page.len());
    }
    for page in &pages[..pages.len() - 1] {
        assert!(page.ends_with('\n'), "cut at a line break: {page:?}");
    }
    assert_eq!(answer_pages("short", 500), vec!["short"]);
    assert_eq!(answer_pages(&text, usize::MAX), vec![text.as_str()]);
}

#[test]
fn a_cut_avoids_splitting_a_code_block_when_it_can() {
    let before = "Intro line that is long enough to matter here.\n".repeat(3);
    let code = format!("```rust\n{}```\n", "let x = 1;\n".repeat(8));
    let text = format!("{before}{code}after");
    let pages = answer_pages(&text, before.len() + code.len() - 10);
    assert_eq!(
        pages[0], before,
        "cut before the fence opens, not inside it"
    );
    assert_eq!(pages.concat(), text);
}

#[test]
fn text_without_breaks_is_cut_at_spaces_and_then_at_characters() {
    let words = "word ".repeat(200);
    for page in &answer_pages(&words, 64)[..] {
        assert!(page.len() <= 64);
        assert!(page.ends_with(' ') || page.len() < 64);
    }
    let cjk = "飞书".repeat(100);
    let pages = answer_pages(&cjk, 10);
    assert!(pages.iter().all(|p| p.len() <= 10 && !p.is_empty()));
    assert_eq!(pages.concat(), cjk, "cut on character boundaries");
    assert_eq!(
        answer_pages("飞", 1),
        vec!["飞"],
        "one character longer than the budget"
    );
}

proptest! {
    #[test]
    fn pages_are_the_text_within_the_budget_and_stay_put_as_it_grows(
        text in "(\\PC{0,40}[ \\n]?){0,60}",
        more in "(\\PC{0,40}[ \\n]?){0,20}",
        budget in 1usize..300,
    ) {
        let pages = answer_pages(&text, budget);
        prop_assert_eq!(pages.concat(), text.clone());
        for page in &pages {
            prop_assert!(!page.is_empty() || text.is_empty());
            prop_assert!(page.len() <= budget || page.chars().count() == 1);
        }
        let grown = format!("{text}{more}");
        let later = answer_pages(&grown, budget);
        let settled = pages.len() - 1;
        prop_assert_eq!(&later[..settled], &pages[..settled], "full pages never change");
    }
}

#[test]
fn a_segment_with_a_long_answer_is_one_card_per_page_with_stop_on_the_last() {
    let mut s = Story::new();
    s.start_turn("tn_1", "Write the report");
    let text: String = (0..30).map(paragraph).collect();
    s.delta(&text);
    let mut view = SessionView::new();
    for event in &s.events {
        view.apply(event);
    }
    let segment = CardRef::Turn(turn("tn_1"));
    let cards = cards_for(&view, &segment, 700);
    let keys: Vec<&str> = cards.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys.len() >= 3, "{keys:?}");
    assert_eq!(keys[0], "turn:tn_1");
    assert_eq!(keys[1], "turn:tn_1:page:1");
    assert_eq!(keys[2], "turn:tn_1:page:2");
    let (last, before) = cards.split_last().unwrap();
    for (_, card) in before {
        assert!(!has_stop(card));
        assert_eq!(
            context_lines(card).last().map(String::as_str),
            Some(CONTINUED_BELOW)
        );
    }
    assert!(
        has_stop(&last.1),
        "the newest card offers Stop while the turn runs"
    );
    // The first card keeps the status line.
    assert_ne!(
        context_lines(&before[0].1).first().map(String::as_str),
        Some(CONTINUED_BELOW)
    );

    // Without a budget it is the one card it always was.
    assert_eq!(cards_for(&view, &segment, usize::MAX).len(), 1);
    assert_eq!(
        card_for(&view, &segment).map(|(k, _)| k).as_deref(),
        Some("turn:tn_1")
    );

    // Once the turn ends no page offers Stop.
    s.message(Some(&text), &[]);
    s.end(TurnEndStatus::Completed);
    let mut view = SessionView::new();
    for event in &s.events {
        view.apply(event);
    }
    assert!(
        cards_for(&view, &segment, 700)
            .iter()
            .all(|(_, card)| !has_stop(card))
    );
}

#[test]
fn pages_the_answer_no_longer_reaches_get_a_note_instead_of_old_text() {
    let long: String = (0..30).map(paragraph).collect();
    let mut s = Story::new();
    s.start_turn("tn_1", "Write the report");
    s.delta(&long);
    // The model's long draft ends its step; its next step writes a short text instead.
    s.message(Some(&long), &["read_file"]);
    let segment = CardRef::Turn(turn("tn_1"));
    let mut shown = PagesShown::default();
    let first = shown.settle(cards_for(&s.view(), &segment, 700));
    assert!(first.len() >= 3);
    s.delta("Short final answer.");
    let later = shown.settle(cards_for(&s.view(), &segment, 700));
    assert_eq!(later.len(), first.len(), "every page shown is updated");
    assert!(context_lines(&later[1].1).contains(&PAGE_REPLACED.to_owned()));
    assert_eq!(later[1].0, "turn:tn_1:page:1");
    // Single-card segments are not remembered.
    let mut none = PagesShown::default();
    let one = none.settle(cards_for(&s.view(), &segment, usize::MAX));
    assert_eq!(one.len(), 1);
}
