//! How a tool call ended, and how that is written down.
//!
//! Invariant: every tool call of an assistant message is answered exactly once: the ledger row
//! is closed with the outcome first (so a restart can replay it without re-running anything),
//! then the tool message joins the history, then `tool_finished` is emitted.

use serde::{Deserialize, Serialize};
use workmate_protocol::{EventKind, Message, ToolCall, ToolStatus};
use workmate_store::ToolCallState;

use super::Turn;
use super::preview::result_preview;
use crate::Result;

/// The outcome of one call, as stored in the ledger's result column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) status: ToolStatus,
    /// What the model sees.
    pub(crate) content: String,
    /// Display-only sidecar, never sent to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) display: Option<serde_json::Value>,
    /// Why it was not ok (denied, error, interrupted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// Whether the tool ran at all.
    pub(crate) executed: bool,
}

impl Outcome {
    /// The tool ran and returned `value` (a `_display` field is split off).
    pub(crate) fn ran(value: serde_json::Value) -> Self {
        let (value, display) = split_display(value);
        let content = match value {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        };
        Self {
            status: ToolStatus::Ok,
            content,
            display,
            reason: None,
            executed: true,
        }
    }

    /// The tool ran and failed.
    pub(crate) fn failed(message: &str) -> Self {
        let status = if message == super::INTERRUPTED_BY_USER {
            ToolStatus::Interrupted
        } else {
            ToolStatus::Error
        };
        Self {
            status,
            content: serde_json::json!({ "error": message }).to_string(),
            display: None,
            reason: Some(message.to_owned()),
            executed: true,
        }
    }

    /// The call was not executed: refused, or not runnable (unknown tool, mangled arguments).
    pub(crate) fn not_executed(status: ToolStatus, reason: &str) -> Self {
        Self {
            status,
            content: serde_json::json!({ "error": "tool call not executed", "reason": reason })
                .to_string(),
            display: None,
            reason: Some(reason.to_owned()),
            executed: false,
        }
    }

    /// An answer produced by the engine itself (interactive tools).
    pub(crate) fn answered(status: ToolStatus, result: &serde_json::Value) -> Self {
        Self {
            status,
            content: result.to_string(),
            display: None,
            reason: None,
            executed: false,
        }
    }

    fn ledger_state(&self) -> ToolCallState {
        match (self.status, self.executed) {
            (ToolStatus::Interrupted, _) => ToolCallState::Interrupted,
            (_, true) => ToolCallState::Finished,
            (_, false) => ToolCallState::Denied,
        }
    }
}

fn split_display(value: serde_json::Value) -> (serde_json::Value, Option<serde_json::Value>) {
    match value {
        serde_json::Value::Object(mut map) => {
            let display = map.remove("_display");
            (serde_json::Value::Object(map), display)
        }
        other => (other, None),
    }
}

impl Turn {
    /// Closes the call's ledger row with `outcome`, appends its tool message, emits
    /// `tool_finished`.
    pub(crate) async fn answer(&mut self, call: &ToolCall, outcome: Outcome) -> Result<()> {
        let outcome = self.redacted(outcome).await?;
        let stored = serde_json::to_value(&outcome)
            .map_err(|e| crate::Error::Rejected(format!("cannot encode a tool outcome: {e}")))?;
        let to = outcome.ledger_state();
        let detail = serde_json::json!({
            "tool_call_id": call.id,
            "turn_id": self.emit.turn,
            "model": self.answering_model,
            "surface": self.session.key.surface,
            "result_preview": result_preview(&outcome.content),
            "reason": outcome.reason,
            "executed": outcome.executed,
            "standing_rule": self.standing_rules_used.get(&call.id),
        });
        let status = match outcome.status {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Denied => "denied",
            _ => "interrupted",
        };
        let audit = self.audit_record(call, "tool_finished", Some(status), detail);
        let saved = super::memory_notice::memory_notice(call, &outcome, self.now());
        let (message, finished) = self.tool_answer(call, outcome).await?;
        let mut messages = vec![message];
        let mut events = vec![finished];
        if let Some((notice, event)) = saved {
            messages.push(notice);
            events.push(event);
        }
        // The move, the answer and its audit record are one step: a restart never finds a call
        // closed in the ledger but unanswered in the history, or the reverse. Were the row
        // already closed (a replay), the history would still need its tool message.
        self.emit.write(crate::emitter::Step {
            messages: messages.clone(),
            events,
            moves: vec![workmate_store::LedgerMove {
                call: call.id.clone(),
                to,
                result: Some(stored),
            }],
            audit: vec![audit],
            ..crate::emitter::Step::default()
        })?;
        self.history.extend(messages);
        Ok(())
    }

    /// Writes an outcome that the ledger already holds (a replay after a restart).
    pub(crate) async fn record(&mut self, call: &ToolCall, outcome: Outcome) -> Result<()> {
        let (message, finished) = self.tool_answer(call, outcome).await?;
        self.append_with(message, finished)
    }

    /// The tool message and `tool_finished` event that answer `call`.
    async fn tool_answer(
        &mut self,
        call: &ToolCall,
        outcome: Outcome,
    ) -> Result<(Message, EventKind)> {
        self.audit_hidden_counts(call, outcome.display.as_ref())
            .await?;
        let message = Message::Tool {
            tool_call_id: call.id.clone(),
            content: outcome.content.clone(),
            ts: self.now(),
            display: outcome.display.clone(),
        };
        let (result_preview, reason) = match outcome.status {
            ToolStatus::Ok => (Some(result_preview(&outcome.content)), None),
            _ => (None, outcome.reason.clone()),
        };
        let finished = EventKind::ToolFinished {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            status: outcome.status,
            result_preview,
            reason,
            display: outcome.display,
            standing_rule: self.standing_rules_used.remove(&call.id),
        };
        Ok((message, finished))
    }

    /// `outcome` with its result redacted when the tenant redacts model input
    /// ([`crate::dlp`]); how many values were hidden joins the `_display` sidecar as
    /// `hidden_fields`, so the model never learns what they were.
    async fn redacted(&self, mut outcome: Outcome) -> Result<Outcome> {
        if !self.redacts_model_input().await? {
            return Ok(outcome);
        }
        let (content, hidden) = crate::dlp::redact_result(&outcome.content);
        if hidden == 0 {
            return Ok(outcome);
        }
        outcome.content = content;
        let mut display = match outcome.display.take() {
            Some(serde_json::Value::Object(map)) => map,
            Some(other) => serde_json::Map::from_iter([("shown".to_owned(), other)]),
            None => serde_json::Map::new(),
        };
        let before = display
            .get("hidden_fields")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        display.insert(
            "hidden_fields".into(),
            serde_json::Value::from(before + u64::from(hidden)),
        );
        outcome.display = Some(serde_json::Value::Object(display));
        Ok(outcome)
    }

    /// Audits how many items a privacy filter hid: counts only, never content.
    async fn audit_hidden_counts(
        &self,
        call: &ToolCall,
        display: Option<&serde_json::Value>,
    ) -> Result<()> {
        let count = |key: &str| {
            display
                .and_then(|d| d.get(key))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let (results, fields) = (count("hidden_by_filters"), count("hidden_fields"));
        if results == 0 && fields == 0 {
            return Ok(());
        }
        let detail = serde_json::json!({
            "reason": format!("{results} result(s) hidden · {fields} field value(s) stripped by privacy filters"),
            "hidden_by_filters": results,
            "hidden_fields": fields,
        });
        self.audit(call, "filtered", Some("hidden"), detail)
    }
}
