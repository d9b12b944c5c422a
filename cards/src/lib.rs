//! Platform-neutral chat cards.
//!
//! A session's events fold into a [`SessionView`]: one live [`TurnCard`] per turn (status, tool
//! steps, the answer streaming in), one [`ApprovalCard`] per parked permission prompt and one
//! [`QuestionCard`] per parked question. The renderers turn each into a [`Card`] of a small IR
//! (headings, rich text, lists, code, tables, buttons) that every chat adapter maps to its own
//! card JSON, within its own limits. Nothing here knows a platform.
//!
//! ```text
//! events ──apply──▶ SessionView ──turn_card / approval_card / question_card──▶ Card ──adapter──▶ JSON
//! ```

mod fold;
mod ir;
mod markdown;
mod render;
mod text;
mod view;

pub use ir::{Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText};
pub use markdown::markdown_to_blocks;
pub use render::{RunResult, approval_card, notice_card, question_card, run_card, turn_card};
pub use view::{
    ApprovalCard, CardRef, PromptState, QuestionCard, SessionView, Step, StepOutcome, TurnCard,
    TurnStatus,
};

#[cfg(feature = "test-support")]
pub mod testing;
