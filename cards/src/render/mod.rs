//! Rendering the view into cards of the IR.
//!
//! Invariants: rendering is a pure function of one card of the view; a pending prompt shows
//! exactly the buttons it offers, a resolved one shows no buttons but who decided and how; a turn
//! segment shows a Stop button exactly while the turn runs and the segment is its newest. Long
//! text is kept whole: platform limits are the adapters' job.

mod approval;
mod plan;
mod run;

pub use approval::approval_card;
pub use plan::plan_card;
pub use run::{RunResult, run_card};

use workmate_protocol::{Resolution, ToolStatus};

use crate::fold::display_name;
use crate::ir::{Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText};
use crate::markdown::markdown_to_blocks;
use crate::text::{one_line, truncate};
use crate::view::{PromptState, QuestionCard, Step, TurnCard, TurnStatus};

/// The longest failure detail shown on a step line, in characters.
const DETAIL_CHARS: usize = 120;

/// What the first context line of a continued segment says.
pub const CONTINUED_BELOW: &str = "↓ Continued below";
/// The Stop button's label.
pub const STOP_LABEL: &str = "Stop";

/// A turn segment's card: the status line, the steps, the answer and context notes; then either
/// that the turn continues below (a continued segment) or, while the turn runs, a Stop button.
pub fn turn_card(turn: &TurnCard) -> Card {
    let mut blocks = vec![Block::Context(status_line(turn))];
    if !turn.steps.is_empty() {
        blocks.push(Block::List {
            ordered: false,
            items: turn.steps.iter().map(step_line).collect(),
        });
    }
    blocks.extend(markdown_to_blocks(&turn.answer));
    push_ending(&mut blocks, turn);
    Card { blocks }
}

/// A page after the first of a segment's long answer (see [`crate::pages`]): its part of the
/// answer, then, on the last page, what a segment's card ends with; on any other page, that the
/// answer continues below.
pub(crate) fn answer_page_card(turn: &TurnCard, page: &str, last: bool) -> Card {
    let mut blocks = markdown_to_blocks(page);
    if last {
        push_ending(&mut blocks, turn);
    } else {
        blocks.push(continued_below());
    }
    Card { blocks }
}

/// How a segment's card ends: its notes, then that the turn continues below (a continued
/// segment) or, while the turn runs, the Stop button.
fn push_ending(blocks: &mut Vec<Block>, turn: &TurnCard) {
    blocks.extend(
        turn.notes
            .iter()
            .map(|note| Block::Context(vec![Inline::Text(note.clone())])),
    );
    if turn.continued {
        blocks.push(continued_below());
    } else if turn.stoppable() {
        blocks.push(Block::Actions(vec![Button {
            label: STOP_LABEL.to_owned(),
            action: ButtonAction::Stop {
                session_id: turn.session_id.clone(),
                turn_id: turn.turn_id.clone(),
            },
            style: ButtonStyle::Danger,
        }]));
    }
}

fn continued_below() -> Block {
    Block::Context(vec![Inline::Text(CONTINUED_BELOW.to_owned())])
}

/// A parked question: the question, one button per option, and how to answer in free text.
pub fn question_card(card: &QuestionCard) -> Card {
    let mut blocks = Vec::new();
    if !card.header.is_empty() {
        blocks.push(Block::Context(vec![Inline::Text(card.header.clone())]));
    }
    let grouped = card.questions.len() > 1;
    if grouped {
        for q in &card.questions {
            blocks.push(Block::Text(RichText(vec![Inline::Bold(
                q.question.clone(),
            )])));
            push_options(&mut blocks, &q.options);
        }
    } else {
        blocks.push(Block::Text(RichText(vec![Inline::Bold(
            card.question.clone(),
        )])));
        push_options(&mut blocks, &card.options);
    }
    match &card.state {
        PromptState::Pending => {
            // A grouped form needs one answer per question, which one click cannot give.
            let buttons: Vec<Button> = if grouped {
                Vec::new()
            } else {
                card.options
                    .iter()
                    .map(|option| Button {
                        label: option.label.clone(),
                        action: ButtonAction::Resolve {
                            item_id: card.item_id.clone(),
                            resolution: Resolution::Answer {
                                text: option.label.clone(),
                            },
                        },
                        style: if option.recommended {
                            ButtonStyle::Primary
                        } else {
                            ButtonStyle::Default
                        },
                    })
                    .collect()
            };
            let hint = if buttons.is_empty() {
                "Reply in the thread to answer."
            } else if card.multi {
                "To choose several, reply in the thread."
            } else if card.allow_text {
                "Or reply in the thread to answer."
            } else {
                ""
            };
            if !buttons.is_empty() {
                blocks.push(Block::Actions(buttons));
            }
            if !hint.is_empty() {
                blocks.push(Block::Context(vec![Inline::Text(hint.to_owned())]));
            }
        }
        PromptState::Resolved { by, resolution, .. } => {
            let line = match resolution {
                Resolution::Answer { text } => {
                    format!("💬 Answered by {}: {text}", display_name(by))
                }
                other => resolved_line(other, display_name(by)),
            };
            blocks.push(Block::Context(vec![Inline::Text(line)]));
        }
    }
    Card { blocks }
}

/// Names the person a card answers: `👤 Ana Lima · ` before its first context line (a turn's
/// status), or a context line of its own on top.
pub(crate) fn name_person(card: &mut Card, name: &str) {
    let whose = format!("👤 {name}");
    match card.blocks.first_mut() {
        Some(Block::Context(line)) => line.insert(0, Inline::Text(format!("{whose} · "))),
        _ => card
            .blocks
            .insert(0, Block::Context(vec![Inline::Text(whose)])),
    }
}

/// A session notice (model switched, mode changed) as a card of its own.
pub fn notice_card(text: &str) -> Card {
    Card {
        blocks: vec![Block::Context(vec![Inline::Text(text.to_owned())])],
    }
}

fn status_line(turn: &TurnCard) -> Vec<Inline> {
    let text = |t: &str| vec![Inline::Text(t.to_owned())];
    match &turn.status {
        TurnStatus::Thinking if turn.reasoning_hint => text("💭 Reasoning…"),
        TurnStatus::Thinking => text("🤔 Thinking…"),
        TurnStatus::RunningTool(name) => vec![
            Inline::Text("⚙️ Running ".into()),
            Inline::Code(name.clone()),
            Inline::Text("…".into()),
        ],
        TurnStatus::WaitingForApproval => text("⏸️ Waiting for approval"),
        TurnStatus::WaitingForAnswer => text("❓ Waiting for an answer"),
        TurnStatus::Done => text("✅ Done"),
        TurnStatus::Stopped => text("⏹️ Stopped"),
        TurnStatus::Failed(error) => text(&format!("❌ Failed: {error}")),
        TurnStatus::MaxIterations => text("⚠️ Stopped at the step limit"),
        TurnStatus::Continued(line) => text(line),
    }
}

fn step_line(step: &Step) -> RichText {
    let mark = match &step.outcome {
        Some(outcome) => match outcome.status {
            ToolStatus::Ok => "✓",
            ToolStatus::Denied => "⛔",
            ToolStatus::Interrupted => "⏹",
            _ => "✗",
        },
        // Answered in a segment that closed: it runs (or not) in the card below.
        None if step.allowed == Some(true) => "✓",
        None if step.allowed == Some(false) => "⛔",
        None if step.started => "⏳",
        // Proposed, not started: waiting for authorization (a rule or a person).
        None => "⏸",
    };
    let mut line = vec![
        Inline::Text(format!("{mark} ")),
        Inline::Code(step.name.clone()),
    ];
    if !step.summary.is_empty() {
        line.push(Inline::Text(format!(" {}", step.summary)));
    }
    if let Some(outcome) = &step.outcome
        && outcome.status != ToolStatus::Ok
        && !outcome.detail.is_empty()
    {
        let detail = truncate(&one_line(&outcome.detail), DETAIL_CHARS);
        line.push(Inline::Italic(format!(" — {detail}")));
    }
    RichText(line)
}

fn push_options(blocks: &mut Vec<Block>, options: &[workmate_protocol::QuestionOption]) {
    let described = options
        .iter()
        .any(|o| o.description.is_some() || o.preview.is_some() || o.recommended);
    if !described {
        return;
    }
    let items = options
        .iter()
        .map(|o| {
            let mut line = vec![Inline::Bold(o.label.clone())];
            if o.recommended {
                line.push(Inline::Text(" (recommended)".into()));
            }
            if let Some(description) = &o.description {
                line.push(Inline::Text(format!(" — {description}")));
            }
            if let Some(preview) = &o.preview {
                line.push(Inline::Text(" ".into()));
                line.push(Inline::Code(one_line(preview)));
            }
            RichText(line)
        })
        .collect();
    blocks.push(Block::List {
        ordered: false,
        items,
    });
}

/// The line that replaces a resolved prompt's buttons, for resolutions other than answers.
fn resolved_line(resolution: &Resolution, name: &str) -> String {
    match resolution {
        Resolution::Dismissed { reason } => format!("Dismissed: {reason}"),
        _ => format!("Resolved by {name}"),
    }
}
