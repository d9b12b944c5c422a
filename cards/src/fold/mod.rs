//! Folding events into the [`SessionView`].
//!
//! Invariants: `apply` is deterministic and never panics; a state event whose `seq` is not newer
//! than the last one applied is skipped, so a replayed or redelivered state event changes nothing.
//! A delta older than the latest state event is skipped too (its text is already in the
//! `assistant_message` that followed it), as is a delta for a turn that has ended. Deltas after
//! the latest state event carry no identity of their own, so only they are not idempotent; they
//! are never persisted, and the `assistant_message` that follows replaces what they appended.
//! Kinds the view does not show are ignored, and so are events of another session than the first
//! one applied.
//!
//! Turn segments: every change to a turn goes through `on_turn`, the one place that opens a new
//! segment when the turn parked on a prompt since its newest segment opened (`prompts.rs` marks
//! it), so no event can update a segment that a prompt's card already follows in the thread.

mod prompts;

use serde_json::Value;
use workmate_protocol::{Actor, Event, EventKind, ToolCallId, ToolStatus, TurnEndStatus, TurnId};

use crate::text::{one_line, patch_files, truncate};
use crate::view::{
    CardRef, PendingBody, PromptState, SessionView, Step, StepOutcome, TurnCard, TurnStatus,
};

/// The longest step summary, in characters.
const SUMMARY_CHARS: usize = 120;

impl SessionView {
    /// Applies one event and returns the cards it changed (empty when it changed nothing).
    pub fn apply(&mut self, event: &Event) -> Vec<CardRef> {
        match &self.session_id {
            Some(session) if session != &event.session_id => return Vec::new(),
            Some(_) => {}
            None => self.session_id = Some(event.session_id.clone()),
        }
        if event.is_state() {
            if event.seq <= self.last_seq {
                return Vec::new();
            }
            self.last_seq = event.seq;
        } else if event.seq < self.last_seq {
            return Vec::new();
        }
        let turn_id = event.turn_id.as_ref();
        match &event.kind {
            EventKind::TurnStart { author, .. } => match turn_id {
                Some(id) if self.turn(id).is_none() => {
                    self.turns.push(TurnCard {
                        session_id: event.session_id.clone(),
                        turn_id: id.clone(),
                        segment: 0,
                        continued: false,
                        author: author.clone(),
                        status: TurnStatus::Thinking,
                        steps: Vec::new(),
                        answer: String::new(),
                        reasoning_hint: false,
                        notes: Vec::new(),
                    });
                    vec![CardRef::Turn(id.clone())]
                }
                _ => Vec::new(),
            },
            EventKind::AssistantDelta { text } => {
                let sealed = turn_id.is_some() && self.sealed.as_ref() == turn_id;
                let changed = self.live_turn(turn_id, |turn| {
                    if sealed {
                        turn.answer.clear();
                    }
                    turn.answer.push_str(text);
                });
                if sealed && !changed.is_empty() {
                    self.sealed = None;
                }
                changed
            }
            EventKind::ReasoningDelta { .. } => self.live_turn(turn_id, |turn| {
                turn.reasoning_hint = true;
            }),
            EventKind::AssistantMessage {
                text, reasoning, ..
            } => {
                let changed = self.on_turn(turn_id, |turn| {
                    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                        turn.answer = text.to_owned();
                    }
                    turn.reasoning_hint |= reasoning.is_some();
                });
                self.sealed = turn_id.cloned();
                changed
            }
            EventKind::ToolProposed {
                tool_call_id,
                name,
                arguments,
            } => self.on_turn(turn_id, |turn| {
                step_mut(turn, tool_call_id, name).summary = summarize(name, arguments);
            }),
            EventKind::PermissionRequired {
                tool_call_id,
                name,
                arguments,
                reason,
                category,
                standing_target,
                readonly_ok,
                choices,
                approvals_required,
            } => {
                let body = PendingBody::Permission {
                    tool: name.clone(),
                    arguments: arguments.clone(),
                    reason: reason.clone(),
                    category: category.clone(),
                    standing_target: standing_target.clone(),
                    readonly_ok: *readonly_ok,
                    choices: choices.clone(),
                    approvals_required: *approvals_required,
                };
                self.announce(tool_call_id, turn_id, body);
                self.on_turn(turn_id, |turn| {
                    set_status(turn, TurnStatus::WaitingForApproval);
                })
            }
            EventKind::QuestionRequested {
                tool_call_id,
                question,
                options,
                allow_text,
                multi,
                header,
                questions,
            } => {
                let body = PendingBody::Question {
                    header: header.clone(),
                    question: question.clone(),
                    options: options.clone(),
                    allow_text: *allow_text,
                    multi: *multi,
                    questions: questions.clone(),
                };
                self.announce(tool_call_id, turn_id, body);
                self.on_turn(turn_id, |turn| {
                    set_status(turn, TurnStatus::WaitingForAnswer);
                })
            }
            EventKind::PlanProposed { tool_call_id, plan } => {
                let body = PendingBody::Plan { plan: plan.clone() };
                self.announce(tool_call_id, turn_id, body);
                self.on_turn(turn_id, |turn| {
                    set_status(turn, TurnStatus::WaitingForApproval);
                })
            }
            EventKind::DirectoryRequested { .. } => self.on_turn(turn_id, |turn| {
                set_status(turn, TurnStatus::WaitingForApproval);
            }),
            EventKind::ToolStarted { tool_call_id, name } => self.on_turn(turn_id, |turn| {
                step_mut(turn, tool_call_id, name).started = true;
                set_status(turn, TurnStatus::RunningTool(name.clone()));
            }),
            EventKind::ToolFinished {
                tool_call_id,
                name,
                status,
                result_preview,
                reason,
                ..
            } => {
                let waiting = self.waiting_status(turn_id);
                self.on_turn(turn_id, |turn| {
                    let detail = match status {
                        ToolStatus::Ok => result_preview.clone(),
                        _ => reason.clone().or_else(|| result_preview.clone()),
                    };
                    step_mut(turn, tool_call_id, name).outcome = Some(StepOutcome {
                        status: *status,
                        detail: detail.unwrap_or_default(),
                    });
                    // A parallel batch may still have calls running or waiting for a person.
                    let running = turn.steps.iter().find(|s| s.started && s.outcome.is_none());
                    let next = match (running, waiting) {
                        (Some(running), _) => TurnStatus::RunningTool(running.name.clone()),
                        (None, Some(waiting)) => waiting,
                        (None, None) => TurnStatus::Thinking,
                    };
                    set_status(turn, next);
                })
            }
            EventKind::IterationEnd { .. } => {
                self.on_turn(turn_id, |turn| set_status(turn, TurnStatus::Thinking))
            }
            EventKind::TurnEnd { status, .. } => self.end_turn(
                turn_id,
                match status {
                    TurnEndStatus::MaxIterationsExceeded => TurnStatus::MaxIterations,
                    _ => TurnStatus::Done,
                },
                None,
            ),
            EventKind::Error { error, .. } => {
                self.end_turn(turn_id, TurnStatus::Failed(error.clone()), None)
            }
            EventKind::Interrupted { by, .. } => {
                let note = match by {
                    Some(actor) => format!("Stopped by {}", display_name(actor)),
                    None => "Stopped by the server".to_owned(),
                };
                self.end_turn(turn_id, TurnStatus::Stopped, Some(note))
            }
            EventKind::Compacted { text } | EventKind::MemorySaved { text, .. } => {
                self.note(turn_id, text.clone())
            }
            EventKind::ModelFallback { from, to, reason } => {
                let note = format!("↪ Answered by {to} instead of {from} ({reason})");
                self.note(turn_id, note)
            }
            EventKind::ModelSwitched { text, .. } | EventKind::PersonaSwitched { text, .. } => {
                self.note(turn_id, text.clone())
            }
            EventKind::ModeChanged { from, to, by } => {
                let note = format!(
                    "Mode changed from {} to {} by {}",
                    from.as_str(),
                    to.as_str(),
                    display_name(by)
                );
                self.note(turn_id, note)
            }
            EventKind::InboxItemParked {
                item_id,
                item_kind,
                tool_call_id: Some(tool_call_id),
                requested_by,
                ..
            } => self.park(item_id, *item_kind, tool_call_id, requested_by.as_ref()),
            EventKind::InboxItemResolved {
                item_id,
                resolution,
                resolved_by,
                via,
                ..
            } => {
                let state = PromptState::Resolved {
                    by: resolved_by.clone(),
                    via: *via,
                    resolution: resolution.clone(),
                };
                self.resolve(item_id, state)
            }
            EventKind::ApprovalCounted {
                item_id,
                approved_by,
                required,
                ..
            } => self.count_approval(item_id, approved_by, *required),
            _ => Vec::new(),
        }
    }

    /// Runs `f` on the event's turn's newest segment, if the turn exists, after opening a new
    /// segment when the turn parked on a prompt since that segment opened. Returns the segment
    /// closed (if one was) and the one changed.
    fn on_turn(&mut self, turn_id: Option<&TurnId>, f: impl FnOnce(&mut TurnCard)) -> Vec<CardRef> {
        let Some(id) = turn_id else {
            return Vec::new();
        };
        let Some(mut index) = self.turns.iter().rposition(|t| &t.turn_id == id) else {
            return Vec::new();
        };
        let mut changed = Vec::new();
        if let Some(at) = self.split.iter().position(|t| t == id) {
            self.split.remove(at);
            let closed = &mut self.turns[index];
            closed.continued = true;
            changed.push(closed.card_ref());
            let next = TurnCard {
                session_id: closed.session_id.clone(),
                turn_id: closed.turn_id.clone(),
                segment: closed.segment.saturating_add(1),
                continued: false,
                author: closed.author.clone(),
                status: closed.status.clone(),
                // Calls still waiting or running go on here, so their outcome shows below.
                steps: closed
                    .steps
                    .iter()
                    .filter(|s| s.outcome.is_none())
                    .cloned()
                    .collect(),
                answer: String::new(),
                reasoning_hint: false,
                notes: Vec::new(),
            };
            self.turns.push(next);
            index = self.turns.len() - 1;
        }
        let turn = &mut self.turns[index];
        f(turn);
        changed.push(turn.card_ref());
        changed
    }

    /// Like `on_turn`, but only while the turn runs: a late delta never reopens an ended turn.
    fn live_turn(
        &mut self,
        turn_id: Option<&TurnId>,
        f: impl FnOnce(&mut TurnCard),
    ) -> Vec<CardRef> {
        let running = turn_id
            .and_then(|id| self.turn(id))
            .is_some_and(|turn| !turn.status.is_terminal());
        if !running {
            return Vec::new();
        }
        self.on_turn(turn_id, f)
    }

    fn end_turn(
        &mut self,
        turn_id: Option<&TurnId>,
        status: TurnStatus,
        note: Option<String>,
    ) -> Vec<CardRef> {
        if self.sealed.as_ref() == turn_id {
            self.sealed = None;
        }
        // A turn has exactly one terminal event; should another arrive, the first one stands.
        self.on_turn(turn_id, |turn| {
            if !turn.status.is_terminal() {
                turn.status = status;
                turn.notes.extend(note);
            }
        })
    }

    /// Adds a context line to the event's turn, or a session notice outside a turn.
    fn note(&mut self, turn_id: Option<&TurnId>, text: String) -> Vec<CardRef> {
        if turn_id.is_some_and(|id| self.turn(id).is_some()) {
            return self.on_turn(turn_id, |turn| turn.notes.push(text));
        }
        self.notices.push(text);
        vec![CardRef::Notice(self.notices.len() - 1)]
    }
}

/// Moves a running turn to `status`; an ended turn keeps its terminal status (a call may still
/// report its interruption after the turn was stopped).
fn set_status(turn: &mut TurnCard, status: TurnStatus) {
    if !turn.status.is_terminal() {
        turn.status = status;
    }
}

/// The step of a call, created if the call was never proposed (so no outcome is lost).
fn step_mut<'a>(turn: &'a mut TurnCard, tool_call_id: &ToolCallId, name: &str) -> &'a mut Step {
    let index = match turn
        .steps
        .iter()
        .position(|s| &s.tool_call_id == tool_call_id)
    {
        Some(index) => index,
        None => {
            turn.steps.push(Step {
                tool_call_id: tool_call_id.clone(),
                name: name.to_owned(),
                summary: String::new(),
                started: false,
                outcome: None,
                allowed: None,
            });
            turn.steps.len() - 1
        }
    };
    &mut turn.steps[index]
}

/// A one-line preview of a call's arguments: the main argument of well-known tools (the files a
/// patch touches), otherwise the compact JSON.
fn summarize(tool: &str, arguments: &Value) -> String {
    let main = ["command", "path", "url", "query", "pattern", "name"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(Value::as_str));
    let patch = arguments.get("patch").and_then(Value::as_str);
    let text = match (main, patch) {
        (_, Some(patch)) if tool == "apply_patch" => patch_files(patch).join(", "),
        (Some(main), _) => main.to_owned(),
        _ => match arguments {
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        },
    };
    truncate(&one_line(&text), SUMMARY_CHARS)
}

/// The name to show for a person.
pub(crate) fn display_name(actor: &Actor) -> &str {
    actor.name.as_deref().unwrap_or(actor.user_id.as_str())
}
