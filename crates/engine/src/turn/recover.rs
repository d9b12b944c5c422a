//! Finishing a turn a crash cut short, by what it was doing when it was cut.
//!
//! Invariants: a recovered turn goes on under its own turn id (no second `turn_start`), so every
//! card that shows it reaches its final state; it ends with exactly one terminal event, like any
//! turn; a call is never run twice (unanswered calls go through the same resume path as after
//! any restart, which answers a call that may have started with "outcome unknown"); the model is
//! called again at most once for a turn cut mid-answer: a turn cut again after that, or cut
//! longer ago than the engine's limit, ends with an `error` whose notice says what happened.

use std::time::Duration;

use workmate_protocol::{EventKind, Message, NoticeKind, ToolCall, TurnEndStatus};

use super::Turn;
use crate::Result;
use crate::history::unanswered_trailing_calls;

/// What a person reads on a turn that could not be finished after a restart.
pub const RESTARTED_NOTICE: &str =
    "workmate restarted while working on this; send it again or use retry";

/// What the notice of a turn taken up again after a restart says (never shown to the model).
const ANSWERING_AGAIN: &str = "workmate restarted while working on this and is answering again";

/// How a cut turn is finished.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Recovery {
    /// Calls were left without a result: they are decided again (a parked prompt waits again,
    /// without a second prompt) and the model loop goes on.
    Resume(Vec<ToolCall>),
    /// Every call has its result: the model is called with them, as the turn would have.
    Continue,
    /// Cut before the first model call or mid-answer: the model is called again, once.
    Retry,
    /// The answer was stored; only the turn's end was lost.
    Complete,
    /// Cut again after a retry, or too long ago: the turn ends with the restart notice.
    GiveUp,
}

impl Recovery {
    /// The outcome's name, as metrics and logs report it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Resume(_) => "resumed",
            Self::Continue => "continued",
            Self::Retry => "retried",
            Self::Complete => "completed",
            Self::GiveUp => "ended",
        }
    }
}

/// How to finish a turn whose history is `history`, cut `cut_ago` ago, when turns cut longer
/// ago than `limit` are not taken up again. Calls left waiting (on an approval, say) are always
/// resumed: a prompt may wait for days.
pub(crate) fn plan(history: &[Message], cut_ago: Duration, limit: Duration) -> Recovery {
    let pending = unanswered_trailing_calls(history);
    if !pending.is_empty() {
        return Recovery::Resume(pending);
    }
    let last = history.iter().rev().find(|m| {
        !matches!(
            m,
            Message::Notice {
                kind: NoticeKind::ModelSwitch,
                ..
            }
        )
    });
    let already_retried = matches!(
        last,
        Some(Message::Notice {
            kind: NoticeKind::Restarted,
            ..
        })
    );
    if already_retried || cut_ago > limit {
        return Recovery::GiveUp;
    }
    match last {
        Some(Message::Tool { .. }) => Recovery::Continue,
        Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty() => Recovery::Complete,
        _ => Recovery::Retry,
    }
}

impl Turn {
    /// Finishes this (cut) turn as `recovery` says.
    pub(crate) async fn recover(&mut self, recovery: Recovery) -> Result<()> {
        if let Some(author) = self.history.iter().rev().find_map(|m| match m {
            Message::User { author, .. } => author.clone(),
            _ => None,
        }) {
            self.requester = author.user_id;
        }
        self.recovering = true;
        match recovery {
            Recovery::Resume(pending) => self.resume_calls(pending).await?,
            Recovery::Continue => {}
            Recovery::Retry => {
                let notice = Message::Notice {
                    kind: NoticeKind::Restarted,
                    text: Some(ANSWERING_AGAIN.into()),
                    ts: self.now(),
                };
                self.append(notice)?;
            }
            Recovery::Complete => {
                self.emit.state(EventKind::TurnEnd {
                    status: TurnEndStatus::Completed,
                    iterations: 0,
                })?;
                return Ok(());
            }
            Recovery::GiveUp => return self.ended_by_restart(None),
        }
        if self.cancel.is_cancelled() {
            return self.interrupted();
        }
        self.run_loop().await
    }

    /// Ends the turn with `error` and the restart notice (with what failed, if anything).
    /// `retry` runs the model again on it, as after any failed turn.
    pub(crate) fn ended_by_restart(&mut self, failure: Option<&str>) -> Result<()> {
        let text = match failure {
            Some(failure) => format!("{RESTARTED_NOTICE} ({failure})"),
            None => RESTARTED_NOTICE.to_owned(),
        };
        self.end_with_error(text, "restarted", None)
    }
}

#[cfg(test)]
mod tests {
    use workmate_protocol::{ToolCallId, UserContent};

    use super::*;

    const LIMIT: Duration = Duration::from_secs(600);

    fn user() -> Message {
        Message::User {
            content: UserContent::Text("hi".into()),
            ts: 1,
            author: None,
            display: None,
        }
    }

    fn assistant(calls: &[&str]) -> Message {
        Message::Assistant {
            content: "ok".into(),
            ts: 2,
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: ToolCallId::from(*id),
                    name: "run_shell".into(),
                    arguments: serde_json::json!({}),
                })
                .collect(),
            reasoning: None,
            usage: None,
            provider_state: Box::default(),
        }
    }

    fn tool(id: &str) -> Message {
        Message::Tool {
            tool_call_id: ToolCallId::from(id),
            content: "done".into(),
            ts: 3,
            display: None,
        }
    }

    fn restarted() -> Message {
        Message::Notice {
            kind: NoticeKind::Restarted,
            text: None,
            ts: 4,
        }
    }

    #[test]
    fn a_turn_is_finished_by_what_it_was_doing() {
        let soon = Duration::from_secs(5);
        let cases = [
            (vec![user()], "retried"),
            (vec![user(), assistant(&["a"])], "resumed"),
            (vec![user(), assistant(&["a"]), tool("a")], "continued"),
            (vec![user(), assistant(&[])], "completed"),
            (vec![user(), restarted()], "ended"),
            (
                vec![user(), restarted(), assistant(&["a"]), tool("a")],
                "continued",
            ),
        ];
        for (history, expected) in cases {
            assert_eq!(plan(&history, soon, LIMIT).name(), expected, "{history:?}");
        }
    }

    #[test]
    fn a_turn_cut_long_ago_ends_unless_a_prompt_waits() {
        let long = LIMIT + Duration::from_secs(1);
        assert_eq!(plan(&[user()], long, LIMIT), Recovery::GiveUp);
        let waiting = [user(), assistant(&["a"])];
        assert_eq!(plan(&waiting, long, LIMIT).name(), "resumed");
    }
}
