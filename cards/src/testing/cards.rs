//! Cards and buttons built directly, for the renderers' limit tests.

use crate::{
    Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText, RunResult, Step, StepOutcome,
    TurnCard, TurnStatus, turn_card,
};
use workmate_protocol::{ApprovalChoice, Resolution, ToolStatus};

use super::{item, turn};

/// A card of every kind of block, each empty: a renderer leaves them all out.
pub fn empty_blocks_card() -> Card {
    Card {
        blocks: vec![
            Block::Heading { text: "  ".into() },
            Block::Text(RichText(vec![Inline::Text(" \n ".into())])),
            Block::Context(Vec::new()),
            Block::Code {
                language: None,
                text: String::new(),
            },
            Block::Table {
                header: Vec::new(),
                rows: Vec::new(),
            },
            Block::Fields(vec![(String::new(), String::new())]),
            Block::List {
                ordered: true,
                items: Vec::new(),
            },
            Block::Actions(Vec::new()),
        ],
    }
}

/// The action of a button that resolves the approval `id` with `choice`.
pub fn approval(id: &str, choice: ApprovalChoice) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Approval { choice },
    }
}

/// The action of a button that answers the question `id` with `text`.
pub fn answer(id: &str, text: &str) -> ButtonAction {
    ButtonAction::Resolve {
        item_id: item(id),
        resolution: Resolution::Answer { text: text.into() },
    }
}

/// The action of the Stop button of turn `tn_1` of session `s_1`.
pub fn stop() -> ButtonAction {
    ButtonAction::Stop {
        session_id: "s_1".into(),
        turn_id: turn("tn_1"),
    }
}

/// Every button of the card, in order.
pub fn every_button(card: &Card) -> impl Iterator<Item = &Button> {
    card.blocks
        .iter()
        .filter_map(|b| match b {
            Block::Actions(buttons) => Some(buttons),
            _ => None,
        })
        .flatten()
}

/// The action of every button of the card, in order.
pub fn actions(card: &Card) -> Vec<ButtonAction> {
    every_button(card).map(|b| b.action.clone()).collect()
}

/// A text block of `text`, unstyled.
pub fn paragraph(text: &str) -> Block {
    Block::Text(RichText(vec![Inline::Text(text.to_owned())]))
}

/// A row of one button.
pub fn one_button(label: &str, action: ButtonAction, style: ButtonStyle) -> Block {
    Block::Actions(vec![Button {
        label: label.to_owned(),
        action,
        style,
    }])
}

/// `count` buttons with labels of over a hundred characters, the `i`th approving `ib_{i}` once.
pub fn long_label_buttons(count: usize) -> Vec<Button> {
    (0..count)
        .map(|i| Button {
            label: format!("{i} {}", "long label ".repeat(10)),
            action: approval(&format!("ib_{i}"), ApprovalChoice::Once),
            style: ButtonStyle::Default,
        })
        .collect()
}

/// A card with `short`, `md` and `long` in every kind of block but a table: a heading, text,
/// context, a quote (each with every kind of inline), fields, code, a list, a divider and a
/// button labelled `long` that answers the question `short` with `md`.
pub fn any_text_in_every_block(short: &str, md: &str, long: &str) -> Card {
    let inlines = vec![
        Inline::Bold(md.to_owned()),
        Inline::Italic(short.to_owned()),
        Inline::Code(md.to_owned()),
        Inline::Strike(long.to_owned()),
        Inline::Link {
            text: short.to_owned(),
            url: md.to_owned(),
        },
        Inline::Text(long.to_owned()),
    ];
    Card {
        blocks: vec![
            Block::Heading {
                text: md.to_owned(),
            },
            Block::Text(RichText(inlines.clone())),
            Block::Context(inlines.clone()),
            Block::Quote(RichText(inlines.clone())),
            Block::Fields(vec![
                (short.to_owned(), long.to_owned()),
                (md.to_owned(), short.to_owned()),
            ]),
            Block::Code {
                language: Some(short.to_owned()),
                text: long.to_owned(),
            },
            Block::List {
                ordered: true,
                items: vec![RichText(inlines); 3],
            },
            Block::Divider,
            one_button(long, answer(short, md), ButtonStyle::Primary),
        ],
    }
}

/// A turn card of `steps` tool calls, `(name, text, kind)` each, with the outcome `kind` picks
/// (ok, error, denied, interrupted, running, waiting), and `answer`.
pub fn busy_turn(steps: &[(String, String, u8)], answer: &str) -> Card {
    let steps = steps
        .iter()
        .enumerate()
        .map(|(i, (name, text, kind))| {
            let status = match kind % 6 {
                0 => Some(ToolStatus::Ok),
                1 => Some(ToolStatus::Error),
                2 => Some(ToolStatus::Denied),
                3 => Some(ToolStatus::Interrupted),
                _ => None,
            };
            Step {
                tool_call_id: format!("call_{i}").into(),
                name: name.clone(),
                summary: text.clone(),
                started: kind % 6 != 5,
                outcome: status.map(|status| StepOutcome {
                    status,
                    detail: text.clone(),
                }),
                allowed: None,
            }
        })
        .collect();
    turn_card(&TurnCard {
        session_id: "s_1".into(),
        turn_id: "tn_1".into(),
        segment: 0,
        continued: false,
        author: None,
        status: TurnStatus::RunningTool("run_shell".into()),
        steps,
        answer: answer.to_owned(),
        reasoning_hint: true,
        notes: vec![answer.chars().take(300).collect()],
    })
}

/// The nightly digest's scheduled run: done in 75 s, with a summary and two files.
pub fn nightly_digest_run() -> RunResult {
    RunResult {
        title: "Nightly digest".into(),
        ok: true,
        trigger: "schedule".into(),
        took_ms: Some(75_000),
        summary: Some("Posted the digest to **#ops**:\n\n- 3 deploys\n- 1 incident".into()),
        error: None,
        artifacts: vec!["digest.md".into(), "reports/2026-01-05.csv".into()],
    }
}

/// The sales digest's catch-up run, failed after 4 s on the gateway's quota.
pub fn failed_sales_digest_run() -> RunResult {
    RunResult {
        title: "Sales digest".into(),
        ok: false,
        trigger: "catchup".into(),
        took_ms: Some(4_000),
        summary: None,
        error: Some("the gateway is over quota".into()),
        artifacts: Vec::new(),
    }
}
