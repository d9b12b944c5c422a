//! Auto-compaction: a long thread stays within its model's window, an overflow is compacted and
//! asked again, a summary that cannot be made trims instead, and `compact` does it on request;
//! the stored history is never changed.

use serde_json::json;
use workmate_protocol::{Command, EventKind, Message, UserContent};

use crate::support::{Harness, state_names};

/// The window the tests' tenant assumes, and the summary the scripted summarizer writes.
const WINDOW: usize = 4_000;
const SUMMARY: &str = "Goal: keep the thread going. Decisions: none yet.";

/// A script whose summarizer conversation comes first (its request is the only one that says
/// "Summarize this part"), then the thread's `turns`.
fn with_summarizer(summaries: serde_json::Value, turns: serde_json::Value) -> String {
    json!({"conversations": [
        {"when": "Summarize this part of the conversation", "turns": summaries},
        {"when": "*", "turns": turns}
    ]})
    .to_string()
}

async fn compacting_at(h: &Harness, window: usize) {
    let settings = json!({"compaction": {"context_window": window, "threshold_pct": 0.5}});
    h.store
        .tenants()
        .set_settings(&h.tenant, &settings)
        .await
        .unwrap();
}

/// The estimated tokens of a request, counted as the engine counts them (characters / 4).
fn tokens(messages: &[Message]) -> usize {
    let chars: usize = messages
        .iter()
        .map(|m| match m {
            Message::System { content } | Message::Tool { content, .. } => content.len(),
            Message::User {
                content: UserContent::Text(text),
                ..
            } => text.len(),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|c| c.arguments.to_string().len())
                        .sum::<usize>()
            }
            _ => 0,
        })
        .sum();
    chars / 4
}

fn is_summary_request(messages: &[Message]) -> bool {
    messages.iter().any(|m| {
        matches!(m, Message::User { content: UserContent::Text(t), .. } if t.contains("Summarize this part"))
    })
}

#[tokio::test]
async fn a_200_turn_thread_stays_within_the_window_through_compaction() {
    let answer = "Noted; here is a considered answer to that point. ".repeat(4);
    let turns: Vec<_> = (0..200).map(|_| json!({"text": answer})).collect();
    let summaries: Vec<_> = (0..1).map(|_| json!({"text": SUMMARY})).collect();
    let mut h = Harness::new(&with_summarizer(json!(summaries), json!(turns))).await;
    compacting_at(&h, WINDOW).await;
    let mut compactions = 0;
    for n in 0..200 {
        h.say(&format!(
            "Point {n}: {}",
            "a detail worth discussing. ".repeat(7)
        ))
        .await;
        let events = h.turn_events().await;
        assert!(
            matches!(events.last().unwrap().kind, EventKind::TurnEnd { .. }),
            "turn {n}: {:?}",
            state_names(&events)
        );
        compactions += events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Compacted { .. }))
            .count();
    }
    let requests = h.model.requests();
    let thread: Vec<_> = requests
        .iter()
        .filter(|r| !is_summary_request(&r.messages))
        .collect();
    assert_eq!(thread.len(), 200, "one call per turn");
    let largest = thread.iter().map(|r| tokens(&r.messages)).max().unwrap();
    assert!(
        largest < WINDOW,
        "a request of {largest} tokens overflowed {WINDOW}"
    );
    assert!(compactions >= 5, "compacted {compactions} times");
    let last = &thread.last().unwrap().messages;
    // After the persona's system message.
    let block = match &last[1] {
        Message::User {
            content: UserContent::Text(text),
            ..
        } => text.clone(),
        other => panic!("the view starts with the block, not {other:?}"),
    };
    assert!(
        block.starts_with("<compacted-history>") && block.contains(SUMMARY),
        "{block}"
    );
    assert!(
        block.contains("Point 1"),
        "the newest replaced words are kept: {block}"
    );
    // The history is whole: every message and answer, and a notice per compaction.
    h.idle().await;
    let history = h.history().await;
    let said = history
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count();
    assert_eq!(said, 200);
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    let view = record
        .compaction
        .expect("the view is stored with the session");
    assert!(view.boundary > 300 && !view.trimmed, "{view:?}");
}

#[tokio::test]
async fn an_overflow_is_compacted_and_asked_again() {
    let turns = json!([
        {"text": "First answer."},
        {"text": "Second answer."},
        {"fail_with": "prompt is too long: 212000 tokens > 200000 maximum"},
        {"text": "Recovered after compaction."}
    ]);
    let mut h = Harness::new(&with_summarizer(json!([{"text": SUMMARY}]), turns)).await;
    for text in ["one", "two"] {
        h.say(text).await;
        h.turn_events().await;
    }
    h.say("three").await;
    let events = h.turn_events().await;
    let names = state_names(&events);
    assert!(
        names.contains(&"compacting") && names.contains(&"compacted"),
        "{names:?}"
    );
    assert_eq!(names.last(), Some(&"turn_end"), "{names:?}");
    h.idle().await;
    let history = h.history().await;
    assert!(history.iter().any(|m| matches!(m, Message::Assistant { content, .. } if content == "Recovered after compaction.")));
    let retried = h.model.requests().last().unwrap().messages.clone();
    assert!(
        matches!(&retried[1], Message::User { content: UserContent::Text(t), .. } if t.contains(SUMMARY)),
        "{retried:?}"
    );
    assert!(
        matches!(retried.last(), Some(Message::User { content: UserContent::Text(t), .. }) if t == "three"),
        "the question itself is still sent: {retried:?}"
    );
}

#[tokio::test]
async fn a_summary_that_cannot_be_made_trims_and_says_so() {
    let turns = json!([
        {"text": "First answer."},
        {"fail_with": "maximum context length is 8192 tokens"},
        {"text": "Answered on the trimmed thread."}
    ]);
    let summaries = json!([{"fail_with": "overloaded"}, {"fail_with": "overloaded"}]);
    let mut h = Harness::new(&with_summarizer(summaries, turns)).await;
    h.say("one").await;
    h.turn_events().await;
    h.say("two").await;
    let events = h.turn_events().await;
    let text = events.iter().find_map(|e| match &e.kind {
        EventKind::Compacted { text } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(
        text.as_deref(),
        Some("Context trimmed — oldest turns dropped (summary unavailable)")
    );
    assert_eq!(state_names(&events).last(), Some(&"turn_end"));
    h.idle().await;
    let record = h
        .store
        .sessions()
        .get(&h.tenant, &h.session)
        .await
        .unwrap()
        .unwrap();
    assert!(record.compaction.unwrap().trimmed);
}

#[tokio::test]
async fn compact_on_request_runs_as_its_own_turn_and_refuses_a_short_thread() {
    let turns = json!([{"text": "First answer."}, {"text": "Second answer."}, {"text": "Third."}]);
    let mut h = Harness::new(&with_summarizer(json!([{"text": SUMMARY}]), turns)).await;
    h.say("one").await;
    h.turn_events().await;
    let refused = h
        .command(Command::Compact {
            actor: Harness::alice(),
        })
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("nothing to compact yet"),
        "{refused}"
    );
    h.say("two").await;
    h.turn_events().await;
    h.command(Command::Compact {
        actor: Harness::alice(),
    })
    .await
    .unwrap();
    let events = h.turn_events().await;
    assert_eq!(
        state_names(&events),
        ["turn_start", "compacting", "compacted", "turn_end"]
    );
    h.say("three").await;
    h.turn_events().await;
    let sent = h.model.requests().last().unwrap().messages.clone();
    assert!(
        matches!(&sent[1], Message::User { content: UserContent::Text(t), .. } if t.contains(SUMMARY)),
        "{sent:?}"
    );
    h.idle().await;
    assert_eq!(
        h.history()
            .await
            .iter()
            .filter(|m| matches!(m, Message::User { .. }))
            .count(),
        3
    );
}
