//! Long answers as pages: a turn segment whose answer is longer than a platform's answer budget
//! shows as several cards, posted one below the other, instead of one card cut at the platform's
//! size limit.
//!
//! Invariants:
//! - The segment's own card (its usual key) keeps the status line and the steps, and shows the
//!   first page; page `p ≥ 1` has the key `{segment key}:page:{p}` and shows only its part of the
//!   answer. Every page but the last ends with "↓ Continued below"; the last carries the notes
//!   and, while the turn runs, the Stop button (only the newest card offers it).
//! - Page boundaries never move as the answer grows: each page is cut from the text the budget
//!   reaches, at the last line break (outside a code fence where there is one), else the last
//!   space, else a character boundary; text added later only extends the last page or opens a
//!   new one. So a page already posted changes only while it is the last.
//! - With no budget (`usize::MAX`), or an answer within it, a segment is the one card it always
//!   was.
//! - A page an answer no longer reaches (the model's next step replaced a long draft with a
//!   shorter text) is not left showing the old text: [`PagesShown`] gives it a note instead.

use std::collections::HashMap;

use crate::ir::{Block, Card, Inline};
use crate::render::{answer_page_card, turn_card};
use crate::view::TurnCard;

/// The answer's pages: consecutive slices that together are the whole text, each at most
/// `budget` bytes (at least one character).
pub fn answer_pages(text: &str, budget: usize) -> Vec<&str> {
    let budget = budget.max(1);
    let mut pages = Vec::new();
    let mut rest = text;
    while rest.len() > budget {
        let cut = cut_point(rest, budget);
        let (page, tail) = rest.split_at(cut);
        pages.push(page);
        rest = tail;
    }
    if !rest.is_empty() || pages.is_empty() {
        pages.push(rest);
    }
    pages
}

/// Where to end a page of `text` (longer than `budget`): just after a line break, preferably
/// one outside a code fence, else after a space, else at the last character boundary within
/// the budget. Never 0.
fn cut_point(text: &str, budget: usize) -> usize {
    let mut end = budget;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        // One character longer than the budget: the page is that character.
        return text.chars().next().map_or(text.len(), char::len_utf8);
    }
    let window = &text[..end];
    let mut in_fence = false;
    let mut outside_fence = None;
    let mut any_break = None;
    let mut line_start = 0;
    for (at, _) in window.match_indices('\n') {
        let line = &window[line_start..at];
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        line_start = at + 1;
        any_break = Some(line_start);
        if !in_fence {
            outside_fence = Some(line_start);
        }
    }
    // A break in the first half would make short pages: a space further on reads better.
    let half = end / 2;
    outside_fence
        .filter(|&at| at > half)
        .or_else(|| any_break.filter(|&at| at > half))
        .or_else(|| window.rfind(' ').map(|at| at + 1).filter(|&at| at > half))
        .unwrap_or(end)
}

/// The cards of one turn segment, its usual key first: one card, or one per page of its answer
/// when the answer is longer than `budget` bytes.
pub(crate) fn turn_cards(turn: &TurnCard, key: String, budget: usize) -> Vec<(String, Card)> {
    let pages = answer_pages(&turn.answer, budget);
    if pages.len() == 1 {
        return vec![(key, turn_card(turn))];
    }
    let mut cards = Vec::with_capacity(pages.len());
    // The first page: status and steps, and the first part of the answer.
    let first = TurnCard {
        answer: pages[0].to_owned(),
        notes: Vec::new(),
        continued: true,
        ..turn.clone()
    };
    cards.push((key.clone(), turn_card(&first)));
    for (p, page) in pages.iter().enumerate().skip(1) {
        let card = answer_page_card(turn, page, p + 1 == pages.len());
        cards.push((format!("{key}:page:{p}"), card));
    }
    cards
}

/// What a page says once the answer no longer reaches it.
pub const PAGE_REPLACED: &str = "↑ The answer above replaced an earlier draft that went on here.";

/// How many pages each turn segment of one session has shown (by the segment's key), so that a
/// card pump clears the pages an answer no longer reaches. Only segments that ever had more than
/// one page are remembered.
#[derive(Clone, Debug, Default)]
pub struct PagesShown(HashMap<String, usize>);

impl PagesShown {
    /// `cards` (from [`crate::cards_for`], the segment's own key first) with a note card for
    /// every page shown before that the answer no longer reaches.
    pub fn settle(&mut self, mut cards: Vec<(String, Card)>) -> Vec<(String, Card)> {
        let Some(key) = cards.first().map(|(key, _)| key.clone()) else {
            return cards;
        };
        let now = cards.len();
        let shown = match self.0.get_mut(&key) {
            Some(shown) => shown,
            None if now > 1 => self.0.entry(key.clone()).or_insert(now),
            None => return cards,
        };
        for page in now..*shown {
            cards.push((format!("{key}:page:{page}"), replaced_page()));
        }
        *shown = (*shown).max(now);
        cards
    }
}

fn replaced_page() -> Card {
    Card {
        blocks: vec![Block::Context(vec![Inline::Text(PAGE_REPLACED.to_owned())])],
    }
}
