//! Measuring a history as a model is sent it, and choosing where a compaction view starts.

use workmate_protocol::{CompactionView, ContentPart, Message, UserContent};

/// Characters counted for one image (a model reads an image as about this many tokens × 4).
const IMAGE_CHARS: usize = 6_000;

/// The estimated tokens of `message` as a model is sent it: its characters / 4 (notices: 0).
pub(crate) fn estimate(message: &Message) -> u64 {
    let chars = match message {
        Message::System { content } => content.len(),
        Message::User { content, .. } => match content {
            UserContent::Text(text) => text.len(),
            UserContent::Parts(parts) => parts.iter().map(part_chars).sum(),
        },
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            content.len()
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
        }
        Message::Tool { content, .. } => content.len(),
        _ => 0,
    };
    (chars as u64).div_ceil(4)
}

fn part_chars(part: &ContentPart) -> usize {
    match part {
        ContentPart::Text { text } => text.len(),
        ContentPart::ImageUrl { .. } => IMAGE_CHARS,
        ContentPart::File { file } => file.file_data.len(),
        _ => 0,
    }
}

/// Where the messages sent as they are begin: the view's boundary, within the history.
pub(crate) fn start(history: &[Message], view: Option<&CompactionView>) -> usize {
    view.map_or(0, |v| {
        usize::try_from(v.boundary).map_or(history.len(), |b| b.min(history.len()))
    })
}

/// The context tokens the next call would send: the prompt the last call reported (if it was
/// made under the current view) plus estimates of what came after it, else an estimate of the
/// whole view.
pub(crate) fn context_tokens(history: &[Message], view: Option<&CompactionView>) -> u64 {
    let start = start(history, view);
    let since = view.map_or(0, |v| usize::try_from(v.messages_at).unwrap_or(usize::MAX));
    let reported = history
        .iter()
        .enumerate()
        .skip(start.max(since))
        .rev()
        .find_map(|(index, message)| match message {
            Message::Assistant {
                usage: Some(usage), ..
            } => Some((index, usage.input + usage.cache_read + usage.cache_write)),
            _ => None,
        });
    match reported {
        Some((index, prompt)) if prompt > 0 => {
            prompt + history[index..].iter().map(estimate).sum::<u64>()
        }
        _ => {
            let summary = view.map_or(0, |v| (v.summary.len() as u64).div_ceil(4));
            let systems: u64 = history[..start]
                .iter()
                .filter(|m| matches!(m, Message::System { .. }))
                .map(estimate)
                .sum();
            summary + systems + history[start..].iter().map(estimate).sum::<u64>()
        }
    }
}

/// Where a new view should begin so that what follows it fits in `keep` tokens: the earliest
/// user message after `current` whose suffix fits; else an assistant message of the newest turn
/// (the earliest that fits, or the last). Never a tool result, which must follow its call.
/// With `whole_turns`, only a user message: the newest turn is then kept whole even when it
/// does not fit. `None` when nothing after `current` can start a view (nothing to compact).
pub(crate) fn boundary(
    history: &[Message],
    current: usize,
    keep: u64,
    whole_turns: bool,
) -> Option<usize> {
    let mut suffix = vec![0u64; history.len() + 1];
    for (index, message) in history.iter().enumerate().rev() {
        suffix[index] = suffix[index + 1] + estimate(message);
    }
    let last_user = history
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))?;
    let first = current + 1;
    let users = (first..=last_user).filter(|&i| matches!(history[i], Message::User { .. }));
    if let Some(found) = users.clone().find(|&i| suffix[i] <= keep) {
        return Some(found);
    }
    if whole_turns {
        return users.clone().next_back();
    }
    let assistants: Vec<usize> = (first.max(last_user + 1)..history.len())
        .filter(|&i| matches!(history[i], Message::Assistant { .. }))
        .collect();
    assistants
        .iter()
        .copied()
        .find(|&i| suffix[i] <= keep)
        .or_else(|| assistants.last().copied())
        // Nothing of the newest turn answered yet: its own message starts the view.
        .or_else(|| users.clone().next_back())
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_protocol::{ToolCall, ToolCallId};

    fn user(chars: usize) -> Message {
        Message::User {
            content: UserContent::Text("u".repeat(chars)),
            ts: 0,
            author: None,
            display: None,
        }
    }

    fn assistant(chars: usize, calls: usize) -> Message {
        Message::Assistant {
            content: "a".repeat(chars),
            ts: 0,
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: ToolCallId::from(format!("c{i}")),
                    name: "t".into(),
                    arguments: serde_json::json!({}),
                })
                .collect(),
            reasoning: None,
            usage: None,
            provider_state: Box::default(),
        }
    }

    fn tool(chars: usize) -> Message {
        Message::Tool {
            tool_call_id: ToolCallId::from("c0"),
            content: "t".repeat(chars),
            ts: 0,
            display: None,
        }
    }

    #[test]
    fn the_boundary_is_the_earliest_user_message_whose_suffix_fits() {
        // Four exchanges of 100 tokens each (400 characters per message pair).
        let history: Vec<Message> = (0..4)
            .flat_map(|_| [user(200), assistant(200, 0)])
            .collect();
        assert_eq!(
            boundary(&history, 0, 250, false),
            Some(4),
            "the last two exchanges fit"
        );
        assert_eq!(boundary(&history, 0, 100, false), Some(6));
        assert_eq!(
            boundary(&history, 4, 250, false),
            Some(6),
            "always after the current one"
        );
    }

    #[test]
    fn a_turn_too_big_to_keep_starts_at_one_of_its_assistant_messages_never_a_tool_result() {
        let history = vec![
            user(40),
            assistant(40, 0),
            user(40),
            assistant(4, 1),
            tool(4_000),
            assistant(4, 1),
            tool(40),
            assistant(40, 0),
        ];
        let chosen = boundary(&history, 0, 50, false).unwrap();
        assert_eq!(
            chosen, 5,
            "the newest turn's assistant message after the big result"
        );
        assert_eq!(
            boundary(&history, 0, 1, true),
            Some(2),
            "whole turns: its user message"
        );
        assert!(
            boundary(&history, 0, 1, false)
                .is_some_and(|i| matches!(history[i], Message::Assistant { .. }))
        );
    }

    #[test]
    fn nothing_to_compact_without_an_earlier_turn() {
        assert_eq!(boundary(&[user(40)], 0, 1, false), None);
        assert_eq!(boundary(&[], 0, 1, true), None);
    }

    #[test]
    fn the_signal_is_the_reported_prompt_plus_what_came_after_it() {
        let mut answered = assistant(40, 0);
        if let Message::Assistant { usage, .. } = &mut answered {
            *usage = Some(workmate_protocol::TokenUsage {
                model: "m".into(),
                input: 1_000,
                output: 10,
                cache_read: 500,
                cache_write: 0,
            });
        }
        let history = vec![user(40), answered, user(400)];
        assert_eq!(context_tokens(&history, None), 1_500 + 10 + 100);
        let view = CompactionView {
            boundary: 2,
            summary: "s".repeat(400),
            trimmed: false,
            messages_at: 3,
            at_ms: 0,
        };
        assert_eq!(
            context_tokens(&history, Some(&view)),
            100 + 100,
            "a usage from before the view no longer says anything"
        );
    }
}
