//! The notice that tells a thread a memory was saved, changed or deleted.
//!
//! Invariant: a notice is made only for a write the memory tool reports as done (a refusal,
//! because the person turned saving off or the memory is not theirs, makes none); it is stored
//! with the call's answer and never sent to a model.

use serde_json::Value;
use workmate_protocol::{EventKind, Message, NoticeKind, ToolCall, ToolStatus};

use super::outcome::Outcome;

/// Longest part of a memory's text quoted in its notice.
const QUOTED_CHARS: usize = 200;

/// The notice message and `memory_saved` event of `call`'s `outcome`, if it saved, changed or
/// deleted a memory.
pub(crate) fn memory_notice(
    call: &ToolCall,
    outcome: &Outcome,
    ts: i64,
) -> Option<(Message, EventKind)> {
    if outcome.status != ToolStatus::Ok {
        return None;
    }
    let result: Value = serde_json::from_str(&outcome.content).ok()?;
    let done = |key: &str| result.get(key).and_then(Value::as_bool) == Some(true);
    let quoted = || {
        let content = call
            .arguments
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut text: String = content.chars().take(QUOTED_CHARS).collect();
        if content.chars().count() > QUOTED_CHARS {
            text.push('…');
        }
        text.replace('\n', " ")
    };
    let text = match call.name.as_str() {
        "remember" if done("saved") => format!("Saved to memory: {}", quoted()),
        "memory_update" if done("updated") => format!("Memory updated: {}", quoted()),
        "memory_forget" if done("deleted") => "Deleted a memory".to_owned(),
        _ => return None,
    };
    let memory_id = result.get("id").and_then(Value::as_str)?.to_owned();
    let notice = Message::Notice {
        kind: NoticeKind::MemorySaved,
        text: Some(text.clone()),
        ts,
    };
    Some((notice, EventKind::MemorySaved { memory_id, text }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use workmate_protocol::ToolCallId;

    fn call(name: &str, content: &str) -> ToolCall {
        ToolCall {
            id: ToolCallId::from("c1"),
            name: name.into(),
            arguments: serde_json::json!({ "content": content }),
        }
    }

    #[test]
    fn only_a_write_that_was_made_is_announced() {
        let saved = Outcome::ran(serde_json::json!({"id": "m1", "scope": "global", "saved": true}));
        let (notice, event) =
            memory_notice(&call("remember", "Deploys on Tuesday"), &saved, 1).unwrap();
        assert!(matches!(
            notice,
            Message::Notice {
                kind: NoticeKind::MemorySaved,
                ..
            }
        ));
        assert_eq!(
            event,
            EventKind::MemorySaved {
                memory_id: "m1".into(),
                text: "Saved to memory: Deploys on Tuesday".into()
            }
        );
        let refused = Outcome::ran(serde_json::json!({"saved": false, "error": "off"}));
        assert!(memory_notice(&call("remember", "x"), &refused, 1).is_none());
        let read = Outcome::ran(serde_json::json!({"id": "m1", "saved": true}));
        assert!(memory_notice(&call("memory_read", "x"), &read, 1).is_none());
        let long = "y".repeat(500);
        let (_, event) = memory_notice(&call("remember", &long), &saved, 1).unwrap();
        let EventKind::MemorySaved { text, .. } = event else {
            unreachable!()
        };
        assert!(text.ends_with('…') && text.chars().count() < 240, "{text}");
    }
}
