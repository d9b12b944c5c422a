//! The approval card: what will run, with exactly the arguments an approver needs to judge it.
//!
//! Well-known tools get a focused preview (the shell command, the file and its new content, a
//! diff of an edit, the patch); any other tool shows its arguments as JSON. Previews are cut at a
//! fixed size with a note saying how much was left out, so nothing is hidden silently.

use serde_json::Value;
use workmate_protocol::{ApprovalChoice, Resolution};

use super::resolved_line;
use crate::fold::display_name;
use crate::ir::{Block, Button, ButtonAction, ButtonStyle, Card, Inline, RichText};
use crate::text::{head_lines, patch_files, plural};
use crate::view::{ApprovalCard, PromptState, Quorum};

/// Lines of a written file's content shown.
const WRITE_LINES: usize = 20;
/// Lines of each side of a replacement shown.
const REPLACE_LINES: usize = 20;
/// Lines of a patch shown.
const PATCH_LINES: usize = 40;
/// Characters of other tools' JSON arguments shown.
const JSON_CHARS: usize = 2_000;

/// A parked permission prompt: title, who asked, risk, the arguments, the reason, and either the
/// offered buttons or who decided.
pub fn approval_card(card: &ApprovalCard) -> Card {
    let mut blocks = vec![Block::Text(RichText(vec![
        Inline::Bold("Run ".into()),
        Inline::Code(card.tool.clone()),
        Inline::Bold("?".into()),
    ]))];
    let mut fields = Vec::new();
    if let Some(actor) = &card.requested_by {
        fields.push(("Requested by".to_owned(), display_name(actor).to_owned()));
    }
    if !card.category.is_empty() {
        fields.push(("Category".to_owned(), card.category.clone()));
    }
    if let Some(target) = &card.standing_target {
        fields.push(("Target".to_owned(), target.clone()));
    }
    if card.readonly_ok {
        fields.push(("Risk".to_owned(), "Read-only command".to_owned()));
    }
    if !fields.is_empty() {
        blocks.push(Block::Fields(fields));
    }
    blocks.extend(arguments(&card.tool, &card.arguments));
    if !card.reason.is_empty() {
        blocks.push(context(format!("Why: {}", card.reason)));
    }
    if let Some(line) = card
        .quorum
        .as_ref()
        .and_then(|q| quorum_line(q, &card.state))
    {
        blocks.push(context(line));
    }
    match &card.state {
        PromptState::Pending => {
            let buttons = card
                .choices
                .iter()
                .map(|&choice| button(card, choice))
                .collect::<Vec<_>>();
            if !buttons.is_empty() {
                blocks.push(Block::Actions(buttons));
            }
        }
        PromptState::Resolved { by, resolution, .. } => {
            let name = display_name(by);
            let line = match resolution {
                Resolution::Approval { choice } if choice.allows() => {
                    format!("✅ Approved by {name} · {}", scope(*choice))
                }
                Resolution::Approval { .. } => format!("❌ Denied by {name}"),
                other => resolved_line(other, name),
            };
            blocks.push(context(line));
        }
    }
    Card { blocks }
}

/// How many approvals a call needing several has, and whose: "🗳 1 of 2 approvals · Ana Lima"
/// while pending; once approved, every approver (the last one too); once denied, who had
/// approved before.
fn quorum_line(quorum: &Quorum, state: &PromptState) -> Option<String> {
    let mut names: Vec<&str> = quorum.approved_by.iter().map(display_name).collect();
    match state {
        PromptState::Pending => {
            let mut line = format!("🗳 {} of {} approvals", names.len(), quorum.required);
            if !names.is_empty() {
                line.push_str(&format!(" · {}", names.join(", ")));
            }
            Some(line)
        }
        PromptState::Resolved {
            by,
            resolution: Resolution::Approval { choice },
            ..
        } if choice.allows() => {
            let last = display_name(by);
            if !names.contains(&last) {
                names.push(last);
            }
            Some(format!(
                "🗳 {} of {} approvals · {}",
                names.len(),
                quorum.required,
                names.join(", ")
            ))
        }
        PromptState::Resolved { .. } if !names.is_empty() => Some(format!(
            "🗳 Approved by {} before the denial",
            names.join(", ")
        )),
        PromptState::Resolved { .. } => None,
    }
}

fn button(card: &ApprovalCard, choice: ApprovalChoice) -> Button {
    let (label, style) = match choice {
        ApprovalChoice::Once => ("Approve once", ButtonStyle::Primary),
        ApprovalChoice::AlwaysTool => ("Always allow tool", ButtonStyle::Default),
        ApprovalChoice::AlwaysCommand => ("Always allow command", ButtonStyle::Default),
        ApprovalChoice::ReadonlySession => ("Allow read-only", ButtonStyle::Default),
        ApprovalChoice::AlwaysTask => ("Always in automation", ButtonStyle::Default),
        ApprovalChoice::Deny => ("Deny", ButtonStyle::Danger),
        other => (other.as_str(), ButtonStyle::Default),
    };
    Button {
        label: label.to_owned(),
        action: ButtonAction::Resolve {
            item_id: card.item_id.clone(),
            resolution: Resolution::Approval { choice },
        },
        style,
    }
}

/// How far an approval reaches, as shown after "Approved by X · ".
fn scope(choice: ApprovalChoice) -> &'static str {
    match choice {
        ApprovalChoice::Once => "once",
        ApprovalChoice::AlwaysTool => "always for this tool",
        ApprovalChoice::AlwaysCommand => "always for this command",
        ApprovalChoice::ReadonlySession => "read-only commands for this session",
        ApprovalChoice::AlwaysTask => "always for this automation",
        other => other.as_str(),
    }
}

/// The preview of a call's arguments; JSON when the tool is not known or its arguments do not
/// have the expected shape.
fn arguments(tool: &str, args: &Value) -> Vec<Block> {
    let str_arg = |key: &str| args.get(key).and_then(Value::as_str);
    let preview = match tool {
        "run_shell" | "run_command" => {
            str_arg("command").map(|command| shell(command, str_arg("description")))
        }
        "write_file" => str_arg("path")
            .zip(str_arg("content"))
            .map(|(path, content)| {
                let overwrite = args
                    .get("overwrite")
                    .and_then(Value::as_bool)
                    .unwrap_or(true);
                write_file(path, content, overwrite)
            }),
        "replace_in_file" => match (str_arg("path"), str_arg("old"), str_arg("new")) {
            (Some(path), Some(old), Some(new)) => {
                let count = args.get("count").and_then(Value::as_u64);
                Some(replace(path, old, new, count))
            }
            _ => None,
        },
        "apply_patch" => str_arg("patch").map(patch),
        _ => None,
    };
    preview.unwrap_or_else(|| json(args))
}

fn shell(command: &str, description: Option<&str>) -> Vec<Block> {
    let mut blocks = Vec::new();
    if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
        blocks.push(Block::Text(RichText(vec![Inline::Text(
            description.to_owned(),
        )])));
    }
    blocks.push(Block::Code {
        language: Some("sh".into()),
        text: command.to_owned(),
    });
    blocks
}

fn write_file(path: &str, content: &str, overwrite: bool) -> Vec<Block> {
    let (head, more) = head_lines(content, WRITE_LINES);
    let mut line = vec![
        Inline::Text("Writes ".into()),
        Inline::Code(path.to_owned()),
        Inline::Text(format!(" ({})", plural(content.lines().count(), "line"))),
    ];
    if !overwrite {
        line.push(Inline::Text(", only if it does not exist".into()));
    }
    let mut blocks = vec![Block::Text(RichText(line))];
    if !head.is_empty() {
        blocks.push(Block::Code {
            language: extension(path),
            text: head,
        });
    }
    blocks.extend(more_lines(more));
    blocks
}

fn replace(path: &str, old: &str, new: &str, count: Option<u64>) -> Vec<Block> {
    let occurrences = match count {
        Some(n) => format!(
            " ({})",
            plural(usize::try_from(n).unwrap_or(usize::MAX), "occurrence")
        ),
        None => " (every occurrence)".to_owned(),
    };
    let mut diff = Vec::new();
    let mut left_out = 0;
    for (sign, side) in [('-', old), ('+', new)] {
        let (head, more) = head_lines(side, REPLACE_LINES);
        diff.extend(head.lines().map(|l| format!("{sign}{l}")));
        left_out += more;
    }
    let mut blocks = vec![
        Block::Text(RichText(vec![
            Inline::Text("Edits ".into()),
            Inline::Code(path.to_owned()),
            Inline::Text(occurrences),
        ])),
        Block::Code {
            language: Some("diff".into()),
            text: diff.join("\n"),
        },
    ];
    blocks.extend(more_lines(left_out));
    blocks
}

fn patch(patch: &str) -> Vec<Block> {
    let files = patch_files(patch);
    let mut blocks = Vec::new();
    if !files.is_empty() {
        let mut line = vec![Inline::Text("Changes ".into())];
        for (i, file) in files.iter().enumerate() {
            if i > 0 {
                line.push(Inline::Text(", ".into()));
            }
            line.push(Inline::Code((*file).to_owned()));
        }
        blocks.push(Block::Text(RichText(line)));
    }
    let (head, more) = head_lines(patch, PATCH_LINES);
    blocks.push(Block::Code {
        language: Some("diff".into()),
        text: head,
    });
    blocks.extend(more_lines(more));
    blocks
}

fn json(args: &Value) -> Vec<Block> {
    let text = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
    let total = text.chars().count();
    let mut blocks = vec![Block::Code {
        language: Some("json".into()),
        text: text.chars().take(JSON_CHARS).collect(),
    }];
    if total > JSON_CHARS {
        blocks.push(context(format!(
            "Arguments cut at 2,000 characters ({total} in total)."
        )));
    }
    blocks
}

fn more_lines(more: usize) -> Option<Block> {
    let lines = if more == 1 { "line" } else { "lines" };
    (more > 0).then(|| context(format!("… {more} more {lines} not shown")))
}

/// A fence language from a file extension (`rs`, `py`, `toml`), when it looks like one.
fn extension(path: &str) -> Option<String> {
    let (_, ext) = path.rsplit_once('.')?;
    let plausible = (1..=8).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric());
    plausible.then(|| ext.to_ascii_lowercase())
}

fn context(text: String) -> Block {
    Block::Context(vec![Inline::Text(text)])
}
