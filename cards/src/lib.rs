//! Platform-neutral chat cards.
//!
//! A session's events fold into a [`SessionView`]: live [`TurnCard`]s per turn (status, tool
//! steps, the answer streaming in, and a Stop button while it runs; a new segment after each
//! prompt, so the thread reads in order), one [`ApprovalCard`] per parked permission prompt and
//! one [`QuestionCard`] per parked question. [`card_for`] names the card an event changed by a
//! stable key, for every platform's card pump; [`cards_for`] does the same with a platform's
//! answer budget, showing a longer answer as several cards. The renderers turn each into a [`Card`] of a small IR
//! (headings, rich text, lists, code, tables, buttons) that every chat adapter maps to its own
//! card JSON, within its own limits. Nothing here knows a platform. [`text`] holds the plain-text
//! helpers (fold a line, cut with `…`, a card as plain lines) that every renderer shares.
//!
//! ```text
//! events ──apply──▶ SessionView ──card_for (turn_card / approval_card / question_card)──▶ (key, Card) ──adapter──▶ JSON
//! ```

mod fold;
mod ir;
mod key;
mod markdown;
pub mod md;
mod pages;
mod render;
pub mod text;
mod view;

pub use ir::{Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText};
pub use key::{card_for, cards_for};
pub use markdown::markdown_to_blocks;
pub use pages::{PAGE_REPLACED, PagesShown, answer_pages};
pub use render::{
    CONTINUED_BELOW, RunResult, STOP_LABEL, approval_card, notice_card, plan_card, question_card,
    run_card, turn_card,
};
pub use view::{
    ApprovalCard, CardRef, PlanCard, PromptState, QuestionCard, Quorum, SessionView, Step,
    StepOutcome, TurnCard, TurnStatus,
};

#[cfg(feature = "test-support")]
pub mod testing;
