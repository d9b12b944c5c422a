//! What a compaction sends a summarizer, and the `<compacted-history>` block that stands in for
//! the older part of a conversation.
//!
//! The block is built from the canonical history every time (never from an earlier block), so
//! what is kept mechanically (the user's own words, the files, commands and tools of the working
//! state) is exact however often a conversation was compacted; only the summary is a model's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use workmate_protocol::{ContentPart, Message, UserContent};

/// Longest tool result quoted to the summarizer.
const TOOL_RESULT_CHARS: usize = 400;
/// Most characters of conversation sent to the summarizer (the newest are kept).
const SPAN_CHARS: usize = 400_000;
/// Most of an earlier summary quoted to the summarizer.
const EARLIER_SUMMARY_CHARS: usize = 24_000;
/// User messages kept word for word, and their length.
const VERBATIM_MESSAGES: usize = 40;
const VERBATIM_CHARS: usize = 600;
/// Entries of each working-state list, and their length.
const STATE_ENTRIES: usize = 30;
const STATE_CHARS: usize = 200;
/// Longest summary kept (about 3,000 tokens).
const SUMMARY_CHARS: usize = 12_000;

/// The summarizer's instructions.
const INSTRUCTIONS: &str = "You summarize the earlier part of a conversation between people and \
an AI coworker, so that the coworker can go on without it. Write a structured summary in plain \
markdown, at most about 2,000 words, with these sections: Goal (what the people want), Decisions \
and facts (what was settled, with names, numbers, ids and links kept exactly), Work done (what \
was changed, run or sent, and its outcome), Open items (what is pending, promised or unanswered). \
Do not invent anything; leave a section out when there is nothing for it. Write only the summary.";

/// The text a block carries when no summary could be made.
const NO_SUMMARY: &str = "No summary is available for this part: it was trimmed to fit the \
context window. The user's own messages and the working state below are kept.";

/// The messages a summarizer is sent for the span `span`, given the earlier block (if the
/// conversation was compacted before).
pub(crate) fn summary_request(earlier: Option<&str>, span: &[Message]) -> Vec<Message> {
    let mut transcript = String::new();
    for message in span {
        let line = match message {
            Message::User {
                content, author, ..
            } => {
                let who = author
                    .as_ref()
                    .and_then(|a| a.name.clone())
                    .unwrap_or_else(|| "User".into());
                format!("{who}: {}", user_text(content))
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut line = format!("Assistant: {content}");
                for call in tool_calls {
                    let _ = write!(
                        line,
                        "\n  [calls {} {}]",
                        call.name,
                        clip(&call.arguments.to_string(), TOOL_RESULT_CHARS)
                    );
                }
                line
            }
            Message::Tool { content, .. } => {
                format!("  [result] {}", clip(content, TOOL_RESULT_CHARS))
            }
            _ => continue,
        };
        transcript.push_str(&line);
        transcript.push('\n');
    }
    let transcript = newest(&transcript, SPAN_CHARS);
    let mut request = String::new();
    if let Some(earlier) = earlier {
        let _ = write!(
            request,
            "The conversation was summarized before; that summary is:\n<earlier-summary>\n{}\n</earlier-summary>\n\n",
            clip(earlier, EARLIER_SUMMARY_CHARS)
        );
    }
    let _ = write!(
        request,
        "Summarize this part of the conversation (oldest first):\n<conversation>\n{transcript}</conversation>"
    );
    vec![
        Message::System {
            content: INSTRUCTIONS.into(),
        },
        Message::User {
            content: UserContent::Text(request),
            ts: 0,
            author: None,
            display: None,
        },
    ]
}

/// The block standing in for `replaced` (every message before the new boundary): the summary
/// (or, when there is none, a note that the part was trimmed), the working state and the user's
/// messages word for word, in about `budget` bytes (the summary takes at most half; the newest
/// of the user's messages are kept first), so a small window is not filled by its own block.
pub(crate) fn block(summary: Option<&str>, replaced: &[Message], budget: usize) -> String {
    let count = replaced.iter().filter(|m| !m.is_notice()).count();
    let mut out = format!(
        "<compacted-history>\nThe first {count} messages of this conversation are not shown; this stands in for them.\n\n## Summary\n"
    );
    match summary {
        Some(text) => out.push_str(clip(text.trim(), SUMMARY_CHARS.min(budget / 2))),
        None => out.push_str(NO_SUMMARY),
    }
    out.push('\n');
    let left = budget.saturating_sub(out.len());
    working_state(replaced, &mut out, left / 3);
    let left = budget.saturating_sub(out.len());
    verbatim(replaced, &mut out, left);
    out.push_str("</compacted-history>");
    out
}

/// The files touched, commands run and tools used in `messages`, from the calls' arguments, in
/// about `budget` bytes (the newest entries first).
fn working_state(messages: &[Message], out: &mut String, budget: usize) {
    let mut files = Vec::new();
    let mut commands = Vec::new();
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for message in messages {
        let Message::Assistant { tool_calls, .. } = message else {
            continue;
        };
        for call in tool_calls {
            *tools.entry(call.name.as_str()).or_default() += 1;
            for key in ["path", "file", "file_path", "destination"] {
                if let Some(path) = call.arguments.get(key).and_then(|v| v.as_str()) {
                    push_unique(&mut files, path);
                }
            }
            if let Some(command) = call.arguments.get("command").and_then(|v| v.as_str()) {
                push_unique(&mut commands, command);
            }
        }
    }
    if tools.is_empty() {
        return;
    }
    let used: Vec<String> = tools
        .iter()
        .map(|(name, n)| format!("{name} ×{n}"))
        .collect();
    let used = format!("Tools used: {}\n", used.join(", "));
    let mut section = String::from("\n## Working state\n");
    let per_list = budget.saturating_sub(section.len() + used.len()) / 2;
    list(&mut section, "Files", &files, per_list);
    list(&mut section, "Commands run", &commands, per_list);
    section.push_str(&used);
    if section.len() <= budget {
        out.push_str(&section);
    }
}

fn push_unique(list: &mut Vec<String>, value: &str) {
    let value = clip(value, STATE_CHARS).replace('\n', " ");
    list.retain(|v| *v != value);
    list.push(value);
}

/// The newest of `entries` (at most [`STATE_ENTRIES`]) that fit in `budget` bytes, oldest first.
fn list(out: &mut String, title: &str, entries: &[String], budget: usize) {
    let kept = newest_fitting(entries, STATE_ENTRIES, budget, |e| e.len() + 3);
    if kept == 0 {
        return;
    }
    let skip = entries.len() - kept;
    let _ = write!(out, "{title}:");
    if skip > 0 {
        let _ = write!(out, " ({skip} earlier not listed)");
    }
    out.push('\n');
    for entry in &entries[skip..] {
        let _ = writeln!(out, "- {entry}");
    }
}

/// How many of the last entries (at most `most`) fit in `budget` bytes.
fn newest_fitting<T>(
    entries: &[T],
    most: usize,
    budget: usize,
    size: impl Fn(&T) -> usize,
) -> usize {
    let mut used = 0;
    entries
        .iter()
        .rev()
        .take(most)
        .take_while(|e| {
            used += size(e);
            used <= budget
        })
        .count()
}

/// The newest user messages of `messages` that fit in `budget` bytes, oldest first.
fn verbatim(messages: &[Message], out: &mut String, budget: usize) {
    let said: Vec<String> = messages
        .iter()
        .filter_map(|m| match m {
            Message::User {
                content, author, ..
            } => {
                let who = author.as_ref().and_then(|a| a.name.clone());
                let text = clip(user_text(content).trim(), VERBATIM_CHARS).to_owned();
                Some(match who {
                    Some(name) => format!("{name}: {text}"),
                    None => text,
                })
            }
            _ => None,
        })
        .collect();
    const HEADING: &str = "\n## What the user said (word for word, oldest first)\n";
    let kept = newest_fitting(
        &said,
        VERBATIM_MESSAGES,
        budget.saturating_sub(HEADING.len() + 40),
        |t| t.len() + 4,
    );
    if kept == 0 {
        return;
    }
    let skip = said.len() - kept;
    out.push_str(HEADING);
    if skip > 0 {
        let _ = writeln!(out, "({skip} earlier messages not shown)");
    }
    for text in &said[skip..] {
        let _ = writeln!(out, "- {}", text.replace('\n', "\n  "));
    }
}

/// The text of a user message (attachments named, not quoted).
fn user_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(text) => text.clone(),
        UserContent::Parts(parts) => parts
            .iter()
            .map(|part| match part {
                ContentPart::Text { text } => text.clone(),
                ContentPart::ImageUrl { .. } => "[image]".into(),
                ContentPart::File { file } => format!("[file {}]", file.filename),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// At most `max` bytes of `text` from its start, cut at a character boundary.
fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most `max` bytes of `text` from its end, cut at a line (or character) boundary.
fn newest(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut begin = text.len() - max;
    while !text.is_char_boundary(begin) {
        begin += 1;
    }
    let rest = &text[begin..];
    rest.find('\n').map_or(rest, |i| &rest[i + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_protocol::{Actor, ToolCall, ToolCallId, UserId};

    fn said(text: &str) -> Message {
        Message::User {
            content: UserContent::Text(text.into()),
            ts: 0,
            author: Some(Actor {
                user_id: UserId::from("u_alice"),
                name: Some("Alice".into()),
            }),
            display: None,
        }
    }

    fn called(name: &str, arguments: serde_json::Value) -> Message {
        Message::Assistant {
            content: String::new(),
            ts: 0,
            tool_calls: vec![ToolCall {
                id: ToolCallId::from("c"),
                name: name.into(),
                arguments,
            }],
            reasoning: None,
            usage: None,
            provider_state: Box::default(),
        }
    }

    #[test]
    fn the_block_keeps_the_users_words_and_the_working_state() {
        let replaced = vec![
            said("Rename the config loader"),
            called("read_file", serde_json::json!({"path": "src/config.rs"})),
            Message::Tool {
                tool_call_id: ToolCallId::from("c"),
                content: "x".repeat(5_000),
                ts: 0,
                display: None,
            },
            called("run_shell", serde_json::json!({"command": "cargo test"})),
            said("and keep the old name as an alias"),
        ];
        let block = block(Some("Goal: rename the loader."), &replaced, 100_000);
        for part in [
            "<compacted-history>",
            "first 5 messages",
            "Goal: rename the loader.",
            "- src/config.rs",
            "- cargo test",
            "read_file ×1, run_shell ×1",
            "- Alice: Rename the config loader",
            "- Alice: and keep the old name as an alias",
            "</compacted-history>",
        ] {
            assert!(block.contains(part), "{part} missing in {block}");
        }
        assert!(
            !block.contains(&"x".repeat(100)),
            "tool results are not quoted"
        );
        assert!(super::block(None, &replaced, 100_000).contains("it was trimmed"));
        let small = super::block(Some(&"s".repeat(2_000)), &replaced, 700);
        assert!(small.len() < 1_000, "{}: {small}", small.len());
        assert!(
            small.contains("- Alice: and keep the old name"),
            "the newest words first: {small}"
        );
    }

    #[test]
    fn the_summarizer_sees_clipped_results_and_the_earlier_summary() {
        let span = vec![
            said("hi"),
            called("read_file", serde_json::json!({"path": "a"})),
            Message::Tool {
                tool_call_id: ToolCallId::from("c"),
                content: "y".repeat(1_000),
                ts: 0,
                display: None,
            },
        ];
        let request = summary_request(Some("before"), &span);
        let Message::User {
            content: UserContent::Text(text),
            ..
        } = &request[1]
        else {
            panic!("a user message");
        };
        assert!(text.contains("<earlier-summary>\nbefore\n"), "{text}");
        assert!(text.contains("Alice: hi"));
        assert!(text.contains(&"y".repeat(400)) && !text.contains(&"y".repeat(401)));
    }

    #[test]
    fn clipping_respects_characters() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(newest("one\ntwo\nthree\n", 9), "three\n");
    }
}
